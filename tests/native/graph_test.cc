// CUDA graphs: each rank's stream is captured around an input update (a kernel adding 1 to every
// input element) and two collectives, one small (latency regime) and one of 4 MiB (throughput
// regime); the graphs are replayed 100 times without host synchronization in between. After k
// replays every input is its initial value + k, so results are known at every replay; a few
// intermediate replays and the last are checked. Replays re-run the same kernel parameters, so
// this is where device-side epochs must carry the protocol from one replay to the next.
//
// AllReduce is captured by one thread per rank (thread-local capture mode); AllGather by one
// thread capturing every rank's stream in relaxed mode around ncclGroupStart/End.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "device.h"
#include "harness.h"
#include "values.h"

namespace purlin::native_test {
namespace {

constexpr int kReplays = 100;
constexpr std::size_t kSmall = 1031;                          // int32 elements
constexpr std::size_t kLarge = (std::size_t{4} << 20) / 4 + 3;  // 4 MiB + 3 elements

std::int32_t input(int rank, std::size_t i, int replays) {
  const std::int32_t v = table<std::int32_t>().value[value_index(rank, i)];
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(v) + static_cast<std::uint32_t>(replays));
}

struct Buffers {
  DeviceBuffer send, recv;
  std::size_t count = 0, recv_count = 0;
};

class Graph : public GpuTestWithParam<int> {
 protected:
  // Allocates and fills each rank's send (count) and recv (recv_count) buffers on its GPU.
  bool setup(World& w, std::vector<Buffers>* bufs, std::size_t count, std::size_t recv_count) {
    bufs->resize(static_cast<std::size_t>(w.size()));
    for (int r = 0; r < w.size(); ++r) {
      const ScopedDevice on(w.device(r));
      const DeviceTables tables;  // on the rank's GPU, like the buffer the kernel fills
      Buffers& b = (*bufs)[static_cast<std::size_t>(r)];
      b.count = count;
      b.recv_count = recv_count;
      if (b.send.reserve(count * 4) != cudaSuccess || b.recv.reserve(recv_count * 4) != cudaSuccess ||
          fill_input(b.send.get(), 4, tables.get(ncclInt32), r, 0, count, w.stream(r)) != cudaSuccess ||
          cudaMemsetAsync(b.recv.get(), 0, recv_count * 4, w.stream(r)) != cudaSuccess ||
          cudaStreamSynchronize(w.stream(r)) != cudaSuccess) {
        ADD_FAILURE() << "buffer setup failed for rank " << r;
        return false;
      }
    }
    return true;
  }

  // Compares every rank's recv with want(i) after `replays` replays; stops at the first bad rank.
  template <class Want>
  void check(World& w, const std::vector<Buffers>& bufs, const char* what, int replays, Want&& want) {
    for (int r = 0; r < w.size(); ++r) {
      ASSERT_EQ(cudaStreamSynchronize(w.stream(r)), cudaSuccess) << what << " replay " << replays;
    }
    for (int r = 0; r < w.size(); ++r) {
      const ScopedDevice on(w.device(r));
      const Buffers& b = bufs[static_cast<std::size_t>(r)];
      std::vector<std::int32_t> got(b.recv_count);
      ASSERT_EQ(cudaMemcpy(got.data(), b.recv.get(), b.recv_count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want(i) && bad++ == 0) first = i;
      }
      ASSERT_EQ(bad, 0u) << what << ", " << w.size() << " ranks, after " << replays << " replays: rank " << r
                         << " has " << bad << " wrong elements; first " << first << ": got " << got[first]
                         << ", expected " << want(first);
    }
  }

  // One replay: every rank's graph on its stream, from its GPU.
  static void launch_all(const World& w, const std::vector<cudaGraphExec_t>& execs) {
    for (int r = 0; r < w.size(); ++r) {
      const ScopedDevice on(w.device(r));
      ASSERT_EQ(cudaGraphLaunch(execs[static_cast<std::size_t>(r)], w.stream(r)), cudaSuccess) << "rank " << r;
    }
  }

  static bool checkpoint(int k) { return k == 1 || k == 2 || k == 37 || k == kReplays; }
};

TEST_P(Graph, AllReduceCapturedPerThread) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  const int n = w->size();
  std::vector<Buffers> small, large;
  if (!setup(*w, &small, kSmall, kSmall) || !setup(*w, &large, kLarge, kLarge)) return;

  std::vector<cudaGraphExec_t> execs(static_cast<std::size_t>(n), nullptr);
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const auto ur = static_cast<std::size_t>(r);
      cudaSetDevice(w->device(r));
      cudaStream_t s = w->stream(r);
      cudaGraph_t g = nullptr;
      if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        errors[ur] = "begin capture";
        return;
      }
      for (Buffers* b : {&small[ur], &large[ur]}) {
        auto* in = reinterpret_cast<std::int32_t*>(b->send.get());
        if (increment_i32(in, b->count, s) != cudaSuccess) errors[ur] = "increment";
        if (const ncclResult_t q = ncclAllReduce(in, b->recv.get(), b->count, ncclInt32, ncclSum, w->comm(r), s);
            q != ncclSuccess) {
          errors[ur] = std::string("ncclAllReduce: ") + ncclGetErrorString(q);
        }
      }
      if (cudaStreamEndCapture(s, &g) != cudaSuccess || !errors[ur].empty()) {
        errors[ur] += " (capture failed)";
        return;
      }
      if (cudaGraphInstantiate(&execs[ur], g, 0) != cudaSuccess) errors[ur] = "instantiate";
      cudaGraphDestroy(g);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) ASSERT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;

  for (int k = 1; k <= kReplays; ++k) {
    launch_all(*w, execs);
    if (HasFatalFailure()) break;
    if (!checkpoint(k)) continue;
    auto sum = [&](std::size_t i) {
      std::uint32_t acc = 0;
      for (int r = 0; r < n; ++r) acc += static_cast<std::uint32_t>(input(r, i, k));
      return static_cast<std::int32_t>(acc);
    };
    check(*w, small, "small AllReduce", k, sum);
    check(*w, large, "4 MiB AllReduce", k, sum);
    if (HasFatalFailure()) break;
  }
  for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
}

TEST_P(Graph, AllGatherCapturedByOneThreadRelaxed) {
  World* w = world(GetParam());
  if (w == nullptr) return;
  const int n = w->size();
  const auto un = static_cast<std::size_t>(n);
  std::vector<Buffers> small, large;
  if (!setup(*w, &small, kSmall, kSmall * un) || !setup(*w, &large, kLarge / un, (kLarge / un) * un)) return;

  for (int r = 0; r < n; ++r) ASSERT_EQ(cudaStreamBeginCapture(w->stream(r), cudaStreamCaptureModeRelaxed), cudaSuccess);
  bool ok = true;
  for (std::vector<Buffers>* bufs : {&small, &large}) {
    // The updates go in before the group: the group may enqueue its calls only at ncclGroupEnd.
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(w->device(r));  // a launch goes to a stream of the current GPU only
      Buffers& b = (*bufs)[static_cast<std::size_t>(r)];
      ok &= increment_i32(reinterpret_cast<std::int32_t*>(b.send.get()), b.count, w->stream(r)) == cudaSuccess;
    }
    ok &= ncclGroupStart() == ncclSuccess;
    for (int r = 0; r < n; ++r) {
      Buffers& b = (*bufs)[static_cast<std::size_t>(r)];
      ok &= ncclAllGather(b.send.get(), b.recv.get(), b.count, ncclInt32, w->comm(r), w->stream(r)) == ncclSuccess;
    }
    ok &= ncclGroupEnd() == ncclSuccess;
  }
  std::vector<cudaGraphExec_t> execs(un, nullptr);
  for (int r = 0; r < n; ++r) {
    const ScopedDevice on(w->device(r));
    cudaGraph_t g = nullptr;
    ok &= cudaStreamEndCapture(w->stream(r), &g) == cudaSuccess;
    ok &= g != nullptr && cudaGraphInstantiate(&execs[static_cast<std::size_t>(r)], g, 0) == cudaSuccess;
    if (g != nullptr) cudaGraphDestroy(g);
  }
  ASSERT_TRUE(ok) << "capture failed";

  for (int k = 1; k <= kReplays; ++k) {
    launch_all(*w, execs);
    if (HasFatalFailure()) break;
    if (!checkpoint(k)) continue;
    for (std::vector<Buffers>* bufs : {&small, &large}) {
      const std::size_t c = (*bufs)[0].count;
      check(*w, *bufs, c == kSmall ? "small AllGather" : "4 MiB AllGather", k,
            [&](std::size_t i) { return input(static_cast<int>(i / c), i % c, k); });
    }
    if (HasFatalFailure()) break;
  }
  for (cudaGraphExec_t e : execs) cudaGraphExecDestroy(e);
}

INSTANTIATE_TEST_SUITE_P(Native, Graph, ::testing::Values(4, 8),
                         [](const ::testing::TestParamInfo<int>& info) { return world_label(info.param); });

}  // namespace
}  // namespace purlin::native_test
