#include "harness.h"

#include <cuda_runtime_api.h>
#include <purlin/purlin.h>

#include <algorithm>
#include <map>
#include <thread>

namespace purlin::native_test {
namespace {

std::map<int, std::unique_ptr<World>>& shared_worlds() {
  static std::map<int, std::unique_ptr<World>> worlds;
  return worlds;
}

}  // namespace

bool have_gpu() {
  static const bool present = visible_gpus() > 0;
  return present;
}

std::unique_ptr<World> World::create(int n, std::string* error, const World* share_streams) {
  std::unique_ptr<World> w(new World());
  if (cudaSetDevice(0) != cudaSuccess) {
    *error = "cudaSetDevice(0) failed";
    return nullptr;
  }
  w->gpus_ = world_gpus(error);
  if (w->gpus_ < 1) return nullptr;
  if (share_streams != nullptr && share_streams->gpus_ != w->gpus_) {
    *error = "the world whose streams are shared spreads over another number of GPUs";
    return nullptr;
  }
  std::vector<int> devices;
  for (int r = 0; r < n; ++r) devices.push_back(w->device(r));
  w->comms_.assign(static_cast<std::size_t>(n), nullptr);
  if (const ncclResult_t r = ncclCommInitAll(w->comms_.data(), n, devices.data()); r != ncclSuccess) {
    *error = "ncclCommInitAll(" + std::to_string(n) + " ranks over " + std::to_string(std::min(n, w->gpus_)) +
             " GPU(s)): " + ncclGetErrorString(r) + ": " + ncclGetLastError(nullptr);
    w->comms_.clear();
    return nullptr;
  }
  if (share_streams != nullptr) {
    w->streams_ = share_streams->streams_;
    w->owns_streams_ = false;
  } else {
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(w->device(r));
      cudaStream_t s = nullptr;
      if (on.error() != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        *error = "cudaStreamCreateWithFlags failed";
        return nullptr;
      }
      w->streams_.push_back(s);
    }
  }
  for (int r = 0; r < n; ++r) {
    int native = 0;
    const ncclResult_t q = purlinCommIsNative(w->comm(r), &native);
    if (q != ncclSuccess || native != 1) {
      *error = "rank " + std::to_string(r) + " of " + std::to_string(n) +
               " is not native (purlinCommIsNative: " + ncclGetErrorString(q) + ", native=" +
               std::to_string(native) + "): these tests need Purlin's own kernels";
      return nullptr;
    }
  }
  return w;
}

std::string world_label(int n) {
  std::string s = "W";
  s += std::to_string(n);  // appended, not concatenated: gcc 12 warns (-Wrestrict) on "W" + string
  return s;
}

World* World::shared(int n, std::string* error) {
  auto& worlds = shared_worlds();
  if (auto it = worlds.find(n); it != worlds.end()) return it->second.get();
  std::unique_ptr<World> w = create(n, error);
  if (!w) return nullptr;
  return (worlds[n] = std::move(w)).get();
}

void World::destroy_shared() { shared_worlds().clear(); }

World::~World() {
  runner_.reset();
  for (cudaStream_t s : streams_) cudaStreamSynchronize(s);
  // One thread per rank: a destroy may wait for its peers.
  std::vector<std::thread> threads;
  for (ncclComm_t c : comms_) {
    if (c != nullptr) threads.emplace_back([c] { ncclCommDestroy(c); });
  }
  for (auto& t : threads) t.join();
  if (owns_streams_) {
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  }
}

std::vector<LocalRank> World::ranks() const {
  std::vector<LocalRank> v;
  for (int r = 0; r < size(); ++r) v.push_back({r, comm(r), stream(r), device(r)});
  return v;
}

cudaError_t World::synchronize_devices() const { return native_test::synchronize_devices(std::min(gpus_, size())); }

Runner& World::runner() {
  if (!runner_) runner_ = std::make_unique<Runner>(size(), ranks());
  return *runner_;
}

const char* style_name(Style s) { return s == Style::kGroup ? "one thread, grouped" : "thread per rank"; }

Issued issue_all(Runner& runner, Style style) {
  Issued out;
  const std::size_t n = runner.local_ranks();
  out.results.assign(n, ncclInternalError);
  if (style == Style::kGroup) {
    if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess) {
      out.group = r;
      return out;
    }
    for (std::size_t i = 0; i < n; ++i) out.results[i] = runner.issue(i);
    out.group = ncclGroupEnd();
    return out;
  }
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      cudaSetDevice(runner.device(i));  // as a framework's thread per GPU does
      out.results[i] = runner.issue(i);
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

std::string run_case(Runner& runner, const Case& c, Style style) {
  std::string error;
  if (!runner.prepare(c, &error)) return "setup: " + error + "\n";
  const Issued issued = issue_all(runner, style);
  return runner.finish(issued.results, issued.group);
}

bool CaseLog::run(Runner& runner, const Case& c, Style style) {
  return record(c, runner.nranks(), style, run_case(runner, c, style));
}

bool CaseLog::record(const Case& c, int nranks, Style style, const std::string& report) {
  ++cases_;
  if (report.empty()) return true;
  ++failures_;
  ADD_FAILURE() << case_name(c) << ", " << nranks << " ranks, " << style_name(style) << ":\n" << report;
  if (failures_ >= kMaxFailures) {
    ADD_FAILURE() << "stopping after " << failures_ << " failing cases of " << cases_;
    return false;
  }
  return true;
}

void GpuTest::SetUp() {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device: the native collective tests need a GPU";
}

World* GpuTest::world(int n) {
  std::string error;
  World* w = World::shared(n, &error);
  if (w == nullptr) ADD_FAILURE() << "world of " << n << " ranks: " << error;
  return w;
}

}  // namespace purlin::native_test
