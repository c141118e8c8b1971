// Native ncclSend / ncclRecv (snac/pairs.h through launch/pairs.h): ranks sharing GPU 0 (or as
// World places them under PURLIN_TEST_GPUS) as threads, grouped patterns (AllToAllV-shaped,
// ring, exchange, one-sided groups where most ranks call nothing, several transfers to one peer,
// self transfers), every element type, counts {0, 1, odd, 1 MiB + odd, 64 MiB}, issued from one
// thread inside one group or from one thread per rank with its own group, and captured into CUDA
// graphs replayed 100 times with new input every replay. Every receive buffer is compared byte
// for byte, guard bytes included.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/pair_patterns.h"
#include "harness.h"

namespace purlin::native_test {
namespace {

constexpr std::size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

using test_patterns::issue_order;
using test_patterns::make_pattern;
using test_patterns::Pattern;
using test_patterns::pattern_name;
using test_patterns::Transfer;

std::size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

constexpr ncclDataType_t kTypes[] = {ncclInt8,   ncclUint8,   ncclInt32,   ncclUint32,     ncclInt64,      ncclUint64,
                                     ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

// Elements of `t` for the issue's sizes: nothing, one, odd, 1 MiB + odd bytes.
std::size_t random_count(std::mt19937_64& rng, ncclDataType_t t) {
  const std::size_t es = type_size(t);
  switch (rng() % 4) {
    case 0: return 0;
    case 1: return 1;
    case 2: return (1 + rng() % 4000) | 1;
    default: return ((std::size_t{1} << 20) + 1 + rng() % 4096) / es | 1;
  }
}

// One launch's buffers, each on its rank's GPU (a send buffer on the sender's, a receive buffer
// on the receiver's), and what the receive buffers must hold.
class Exchange {
 public:
  Exchange(const World& w, std::vector<Transfer> transfers, ncclDataType_t type, std::uint64_t seed)
      : t_(std::move(transfers)), type_(type), es_(type_size(type)) {
    std::mt19937_64 rng(seed);
    for (const Transfer& x : t_) {
      const std::size_t bytes = x.size * es_;
      std::vector<unsigned char> h(bytes);
      for (unsigned char& b : h) b = static_cast<unsigned char>(rng());
      void* s = nullptr;
      void* d = nullptr;
      {
        const ScopedDevice on(w.device(x.from));
        ok_ = ok_ && cudaMalloc(&s, bytes + 1) == cudaSuccess &&
              cudaMemcpy(s, h.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess;
      }
      {
        const ScopedDevice on(w.device(x.to));
        ok_ = ok_ && cudaMalloc(&d, bytes + 2 * kGuard) == cudaSuccess &&
              cudaMemset(d, kGuardByte, bytes + 2 * kGuard) == cudaSuccess;
      }
      src_.push_back(s);  // null or not, freed with the others
      dst_.push_back(d);
      want_.push_back(std::move(h));
      if (!ok_) return;
    }
    // The ranks' streams are non-blocking: the legacy stream's memset (and a pageable copy's
    // DMA) must have landed, on every GPU, before any rank's launch reads or writes these buffers.
    ok_ = ok_ && w.synchronize_devices() == cudaSuccess;
  }
  ~Exchange() {
    for (void* p : src_) cudaFree(p);
    for (void* p : dst_) cudaFree(p);
  }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  bool ok() const { return ok_; }

  // Rank r's calls, in a random order that keeps the order within each (peer, direction).
  ncclResult_t issue_rank(const World& w, int r, std::uint64_t seed) const {
    std::mt19937_64 rng(seed);
    for (const auto& [i, recv] : issue_order(t_, r, rng)) {
      const Transfer& x = t_[i];
      const ncclResult_t res =
          !recv ? ncclSend(src_[i], x.size, type_, x.to, w.comm(r), w.stream(r))
                : ncclRecv(static_cast<char*>(dst_[i]) + kGuard, x.size, type_, x.from, w.comm(r), w.stream(r));
      if (res != ncclSuccess) return res;
    }
    return ncclSuccess;
  }

  // Every rank's calls from this thread inside one group.
  ncclResult_t issue_group(const World& w, std::uint64_t seed) const {
    ncclResult_t res = ncclGroupStart();
    for (int r = 0; r < w.size() && res == ncclSuccess; ++r) res = issue_rank(w, r, seed + static_cast<unsigned>(r));
    const ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
  }

  // One thread per rank, each with its own group.
  ncclResult_t issue_threads(const World& w, std::uint64_t seed) const {
    std::vector<ncclResult_t> results(static_cast<std::size_t>(w.size()), ncclSuccess);
    std::vector<std::thread> threads;
    for (int r = 0; r < w.size(); ++r) {
      threads.emplace_back([&, r] {
        cudaSetDevice(w.device(r));
        ncclResult_t res = ncclGroupStart();
        if (res == ncclSuccess) res = issue_rank(w, r, seed + static_cast<unsigned>(r));
        const ncclResult_t end = ncclGroupEnd();
        results[static_cast<std::size_t>(r)] = res != ncclSuccess ? res : end;
      });
    }
    for (std::thread& t : threads) t.join();
    for (ncclResult_t res : results)
      if (res != ncclSuccess) return res;
    return ncclSuccess;
  }

  // Overwrites every send buffer with `value` on the sender's stream (graph replays).
  bool refill(const World& w, unsigned char value) {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const std::size_t bytes = t_[i].size * es_;
      const ScopedDevice on(w.device(t_[i].from));
      if (cudaMemsetAsync(src_[i], value, bytes, w.stream(t_[i].from)) != cudaSuccess) return false;
      std::fill(want_[i].begin(), want_[i].end(), value);
    }
    return true;
  }

  // "" when every receive buffer holds exactly what was sent, guards untouched.
  std::string check() const {
    for (std::size_t i = 0; i < t_.size(); ++i) {
      const std::size_t bytes = t_[i].size * es_;
      std::vector<unsigned char> got(bytes + 2 * kGuard);
      if (cudaMemcpy(got.data(), dst_[i], got.size(), cudaMemcpyDeviceToHost) != cudaSuccess)
        return std::string("cudaMemcpy: ") + cudaGetErrorString(cudaGetLastError());
      const bool guards = std::all_of(got.begin(), got.begin() + kGuard, [](unsigned char b) { return b == kGuardByte; }) &&
                          std::all_of(got.end() - kGuard, got.end(), [](unsigned char b) { return b == kGuardByte; });
      const bool data = bytes == 0 || std::memcmp(got.data() + kGuard, want_[i].data(), bytes) == 0;
      if (!guards || !data) {
        return std::to_string(t_[i].size) + " elements of type " + std::to_string(static_cast<int>(type_)) +
               " from rank " + std::to_string(t_[i].from) + " to rank " + std::to_string(t_[i].to) +
               (guards ? ": wrong data" : ": guard bytes overwritten");
      }
    }
    return "";
  }

 private:
  std::vector<Transfer> t_;
  ncclDataType_t type_;
  std::size_t es_;
  bool ok_ = true;
  std::vector<void*> src_;
  std::vector<void*> dst_;
  std::vector<std::vector<unsigned char>> want_;
};

bool sync_all(const World& w) {
  for (int r = 0; r < w.size(); ++r)
    if (cudaStreamSynchronize(w.stream(r)) != cudaSuccess) return false;
  return true;
}

class P2p : public GpuTestWithParam<int> {};

// Every pattern with every element type, both ways of issuing, back to back on one world.
TEST_P(P2p, GroupedPatternsEveryTypeExact) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  std::mt19937_64 rng(0xC0FFEEu + static_cast<unsigned>(GetParam()));
  int cases = 0;
  int failures = 0;
  for (int i = 0; i < 48 && failures < 5; ++i) {
    const Pattern p = static_cast<Pattern>(i % 4);
    const ncclDataType_t type = kTypes[static_cast<std::size_t>(i) % 12];
    Exchange x(*w, make_pattern(p, w->size(), rng, [&](std::mt19937_64& g) { return random_count(g, type); }), type,
               rng());
    ASSERT_TRUE(x.ok()) << "cudaMalloc";
    const bool threads = i % 3 == 2;
    const ncclResult_t res = threads ? x.issue_threads(*w, rng()) : x.issue_group(*w, rng());
    ASSERT_EQ(res, ncclSuccess) << pattern_name(p) << ": " << ncclGetErrorString(res);
    ASSERT_TRUE(sync_all(*w)) << cudaGetErrorString(cudaGetLastError());
    const std::string report = x.check();
    ++cases;
    if (!report.empty()) {
      ++failures;
      ADD_FAILURE() << pattern_name(p) << (threads ? " (a thread per rank)" : " (one group)") << ": " << report;
    }
  }
  RecordProperty("cases", cases);
}

// 64 MiB (+ 3 bytes) around a ring and between neighbours: many times the pair's slots.
TEST_P(P2p, LargeTransfersWrapTheRing) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  const std::size_t count = (std::size_t{64} << 20) + 3;
  for (Pattern p : {Pattern::ring, Pattern::exchange}) {
    std::vector<Transfer> t;
    const int n = w->size();
    if (p == Pattern::ring) {
      for (int s = 0; s < n; ++s) t.push_back({s, (s + 1) % n, count});
    } else {
      for (int s = 0; s + 1 < n; s += 2) {
        t.push_back({s, s + 1, count});
        t.push_back({s + 1, s, count - 2});
      }
    }
    Exchange x(*w, t, ncclUint8, 7);
    ASSERT_TRUE(x.ok());
    ASSERT_EQ(x.issue_group(*w, 11), ncclSuccess);
    ASSERT_TRUE(sync_all(*w));
    EXPECT_EQ(x.check(), "") << pattern_name(p);
  }
}

// Each rank's group captured into a graph on its stream, replayed 100 times with new send data
// before every replay; every replay's output checked.
TEST_P(P2p, GraphReplayedAHundredTimes) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  std::mt19937_64 rng(42);
  for (Pattern p : {Pattern::all_to_all_v, Pattern::one_sided}) {
    Exchange x(*w, make_pattern(p, w->size(), rng, [](std::mt19937_64& g) { return random_count(g, ncclFloat32); }),
               ncclFloat32, 5);
    ASSERT_TRUE(x.ok());
    const int n = w->size();
    std::vector<cudaGraph_t> graphs(static_cast<std::size_t>(n));
    std::vector<cudaGraphExec_t> execs(static_cast<std::size_t>(n));
    // One thread captures every rank's stream: relaxed, and every capture ends before the
    // first instantiation (which a capture still open in this thread would refuse).
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(cudaStreamBeginCapture(w->stream(r), cudaStreamCaptureModeRelaxed), cudaSuccess);
    const ncclResult_t issued = x.issue_group(*w, 3);
    bool ended = true;
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(w->device(r));
      ended &= cudaStreamEndCapture(w->stream(r), &graphs[static_cast<std::size_t>(r)]) == cudaSuccess;
    }
    ASSERT_EQ(issued, ncclSuccess);
    ASSERT_TRUE(ended);
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(w->device(r));
      const auto i = static_cast<std::size_t>(r);
      ASSERT_EQ(cudaGraphInstantiate(&execs[i], graphs[i], 0), cudaSuccess);
    }
    for (int k = 0; k < 100; ++k) {
      ASSERT_TRUE(x.refill(*w, static_cast<unsigned char>(k + 1)));
      for (int r = 0; r < n; ++r) {
        const ScopedDevice on(w->device(r));
        ASSERT_EQ(cudaGraphLaunch(execs[static_cast<std::size_t>(r)], w->stream(r)), cudaSuccess);
      }
      ASSERT_TRUE(sync_all(*w));
      const std::string report = x.check();
      ASSERT_EQ(report, "") << pattern_name(p) << ", replay " << k;
    }
    for (int r = 0; r < n; ++r) {
      cudaGraphExecDestroy(execs[static_cast<std::size_t>(r)]);
      cudaGraphDestroy(graphs[static_cast<std::size_t>(r)]);
    }
  }
}

// One group with a collective and point-to-point calls, as NCCL allows: an AllReduce and a ring
// of sends and receives on every rank, issued in that order on some ranks and the other way
// round on others.
TEST_P(P2p, MixedGroupWithACollective) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  const int n = w->size();
  constexpr std::size_t kCount = 3000;
  std::vector<Transfer> ring;
  for (int s = 0; s < n; ++s) ring.push_back({s, (s + 1) % n, 5000 + static_cast<std::size_t>(s)});
  Exchange x(*w, ring, ncclUint8, 9);
  ASSERT_TRUE(x.ok());
  std::vector<float*> bufs(static_cast<std::size_t>(n));
  std::vector<float> host(kCount);
  for (int r = 0; r < n; ++r) {
    const ScopedDevice on(w->device(r));
    for (std::size_t i = 0; i < kCount; ++i) host[i] = static_cast<float>((i + static_cast<std::size_t>(r)) % 7);
    ASSERT_EQ(cudaMalloc(&bufs[static_cast<std::size_t>(r)], kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(bufs[static_cast<std::size_t>(r)], host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ASSERT_EQ(w->synchronize_devices(), cudaSuccess);
  ncclResult_t res = ncclGroupStart();
  for (int r = 0; r < n && res == ncclSuccess; ++r) {
    float* b = bufs[static_cast<std::size_t>(r)];
    auto all_reduce = [&] { return ncclAllReduce(b, b, kCount, ncclFloat32, ncclSum, w->comm(r), w->stream(r)); };
    if (r % 2 == 0) res = all_reduce();
    if (res == ncclSuccess) res = x.issue_rank(*w, r, 1);
    if (res == ncclSuccess && r % 2 == 1) res = all_reduce();
  }
  const ncclResult_t end = ncclGroupEnd();
  ASSERT_EQ(res, ncclSuccess);
  ASSERT_EQ(end, ncclSuccess);
  ASSERT_TRUE(sync_all(*w));
  EXPECT_EQ(x.check(), "");
  for (int r = 0; r < n; ++r) {
    const ScopedDevice on(w->device(r));
    ASSERT_EQ(cudaMemcpy(host.data(), bufs[static_cast<std::size_t>(r)], kCount * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (std::size_t i = 0; i < kCount; ++i) {
      float want = 0;
      for (int q = 0; q < n; ++q) want += static_cast<float>((i + static_cast<std::size_t>(q)) % 7);
      if (host[i] != want) {
        ADD_FAILURE() << "AllReduce on rank " << r << " element " << i << ": " << host[i] << ", want " << want;
        break;
      }
    }
    cudaFree(bufs[static_cast<std::size_t>(r)]);
  }
}

INSTANTIATE_TEST_SUITE_P(Native, P2p, ::testing::Values(2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& i) { return world_label(i.param); });

// A send to itself without its receive in the group is refused with a named argument, and the
// group leaves nothing running.
TEST_F(GpuTest, P2pUnmatchedSelfSendIsInvalidArgument) {
  World* w = world(2);
  if (w == nullptr) return;
  void* b = nullptr;
  {
    const ScopedDevice on(w->device(0));  // rank 0's buffer
    ASSERT_EQ(cudaMalloc(&b, 64), cudaSuccess);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(b, 16, ncclFloat32, 0, w->comm(0), w->stream(0)), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  EXPECT_TRUE(sync_all(*w));
  cudaFree(b);
}

// PURLIN_TRACE_FILE on point-to-point (snac/trace.h): every rank's file holds the pair launches'
// workers, each having passed item, worked and exit in that order and counted what it moved,
// and the exchange itself stays exact.
TEST_F(GpuTest, P2pTraceRecordsEveryRanksTransfers) {
  const int n = 4;
  constexpr std::size_t kBytes = 8192;
  const std::string file = ::testing::TempDir() + "purlin_p2p_trace";
  std::vector<void*> send(n), recv(n);
  {
    const ScopedEnv trace("PURLIN_TRACE_FILE", file.c_str());
    std::string error;
    std::unique_ptr<World> w = World::create(n, &error);
    ASSERT_NE(w, nullptr) << error;
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(w->device(r));
      ASSERT_EQ(cudaMalloc(&send[r], kBytes * n), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&recv[r], kBytes * n), cudaSuccess);
      ASSERT_EQ(cudaMemset(send[r], r + 1, kBytes * n), cudaSuccess);
      ASSERT_EQ(cudaMemset(recv[r], 0, kBytes * n), cudaSuccess);
    }
    for (int call = 0; call < 3; ++call) {
      ASSERT_EQ(ncclGroupStart(), ncclSuccess);
      for (int r = 0; r < n; ++r) {
        for (int p = 0; p < n; ++p) {
          auto* out = static_cast<char*>(send[r]) + p * kBytes;
          auto* in = static_cast<char*>(recv[r]) + p * kBytes;
          ASSERT_EQ(ncclSend(out, kBytes, ncclUint8, p, w->comm(r), w->stream(r)), ncclSuccess);
          ASSERT_EQ(ncclRecv(in, kBytes, ncclUint8, p, w->comm(r), w->stream(r)), ncclSuccess);
        }
      }
      ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    }
    ASSERT_TRUE(sync_all(*w)) << cudaGetErrorString(cudaGetLastError());
    for (int r = 0; r < n; ++r) {
      std::vector<unsigned char> got(kBytes * n);
      ASSERT_EQ(cudaMemcpy(got.data(), recv[r], got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      for (int p = 0; p < n; ++p) {
        EXPECT_EQ(std::count(got.begin() + p * kBytes, got.begin() + (p + 1) * kBytes, p + 1),
                  static_cast<long>(kBytes))
            << "rank " << r << " from " << p;
      }
      cudaFree(send[r]);
      cudaFree(recv[r]);
    }
  }  // the communicators are destroyed here, which writes the trace
  for (int r = 0; r < n; ++r) {
    std::ifstream in(file + ".rank" + std::to_string(r));
    ASSERT_TRUE(in) << "no trace of rank " << r;
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    std::vector<std::string> names;
    std::string cell;
    for (std::stringstream cols(line); std::getline(cols, cell, ',');) names.push_back(cell);
    auto column = [&](const char* name) {
      return static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    };
    const std::size_t item = column("item"), worked = column("worked"), left = column("exit"),
                      moved = column("group");
    ASSERT_LT(std::max({item, worked, left, moved}), names.size());
    int movers = 0;
    while (std::getline(in, line)) {
      std::vector<unsigned long long> v;
      for (std::stringstream cols(line); std::getline(cols, cell, ',');) v.push_back(std::stoull(cell));
      ASSERT_EQ(v.size(), names.size());
      if (v[moved] == 0) continue;  // a worker without a transfer of its own
      ++movers;
      EXPECT_GT(v[item], 0u);
      EXPECT_LE(v[item], v[worked]);
      EXPECT_LE(v[worked], v[left]);
    }
    EXPECT_GT(movers, 0) << "rank " << r << ": no worker recorded a transfer";
  }
}

}  // namespace
}  // namespace purlin::native_test
