// Ranks that make different calls (issue 13): each launch carries its call's fingerprint, so a
// rank whose peer runs another collective, count or root ends with an asynchronous error that
// names both calls, well before PURLIN_TIMEOUT_S, instead of hanging or writing garbage.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "harness.h"

namespace purlin::native_test {
namespace {

class Mismatch : public GpuTest {};


constexpr std::size_t kCount = 1 << 16;  // floats per buffer: room for every call below

// Runs call(rank) on both ranks of a fresh 2-rank world and expects both to end with an error
// that names both calls (their descriptions `mine` and `theirs` in the WARN) within 5 s, far
// below the 30 s timeout that would end them otherwise.
void expect_mismatch(const std::function<ncclResult_t(int, float*, float*, World&)>& call,
                     const std::string& first, const std::string& second) {
  std::string error;
  std::unique_ptr<World> w;
  {
    const ScopedEnv timeout("PURLIN_TIMEOUT_S", "30");
    w = World::create(2, &error);
  }
  ASSERT_TRUE(w) << error;
  float* buf[2][2] = {};
  for (int r = 0; r < 2; ++r) {
    const ScopedDevice on(w->device(r));
    for (float*& b : buf[r]) {
      ASSERT_EQ(cudaMalloc(&b, 2 * kCount * sizeof(float)), cudaSuccess);
      ASSERT_EQ(cudaMemset(b, 0, 2 * kCount * sizeof(float)), cudaSuccess);
    }
  }
  ASSERT_EQ(w->synchronize_devices(), cudaSuccess);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 2; ++r) ASSERT_EQ(call(r, buf[r][0], buf[r][1], *w), ncclSuccess);
  for (int r = 0; r < 2; ++r) ASSERT_EQ(cudaStreamSynchronize(w->stream(r)), cudaSuccess);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "the mismatch was not detected before the timeout";

  int named = 0;
  for (int r = 0; r < 2; ++r) {
    ncclResult_t async = ncclSuccess;
    EXPECT_EQ(ncclCommGetAsyncError(w->comm(r), &async), ncclSuccess);
    if (async == ncclSuccess) continue;  // a rank that finished before its peer started
    const std::string report = ncclGetLastError(w->comm(r));
    EXPECT_NE(report.find("mismatch"), std::string::npos) << report;
    EXPECT_NE(report.find(first), std::string::npos) << report;
    EXPECT_NE(report.find(second), std::string::npos) << report;
    ++named;
  }
  EXPECT_GE(named, 1) << "no rank reported the mismatch";
  for (auto& rank : buf) {
    for (float* b : rank) cudaFree(b);
  }
}

TEST_F(Mismatch, CountsDiffer) {
  expect_mismatch(
      [](int r, float* in, float* out, World& w) {
        return ncclAllReduce(in, out, r == 0 ? kCount : kCount / 2, ncclFloat32, ncclSum,
                             w.comm(r), w.stream(r));
      },
      "count " + std::to_string(kCount), "count " + std::to_string(kCount / 2));
}

TEST_F(Mismatch, CollectivesDiffer) {
  expect_mismatch(
      [](int r, float* in, float* out, World& w) {
        return r == 0 ? ncclAllReduce(in, out, kCount, ncclFloat32, ncclSum, w.comm(r), w.stream(r))
                      : ncclReduceScatter(in, out, kCount / 2, ncclFloat32, ncclSum, w.comm(r),
                                          w.stream(r));
      },
      "AllReduce", "ReduceScatter");
}

TEST_F(Mismatch, RootsDiffer) {
  expect_mismatch(
      [](int r, float* in, float* out, World& w) {
        return ncclBroadcast(in, out, kCount, ncclFloat32, r, w.comm(r), w.stream(r));
      },
      "root 0", "root 1");
}

}  // namespace
}  // namespace purlin::native_test
