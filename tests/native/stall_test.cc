// A rank whose peer never launches: its device waits give up after PURLIN_TIMEOUT_S, the
// communicator turns to ncclSystemError, and the error names what it waited for and from whom
// (the stall record, handle.h), so a hang across ranks can be diagnosed from the log.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "harness.h"

namespace purlin::native_test {
namespace {

class Stall : public GpuTest {};

// A world of 2 ranks whose waits give up after half a second.
std::unique_ptr<World> impatient_world(std::string* error) {
  const ScopedEnv timeout("PURLIN_TIMEOUT_S", "0.5");
  return World::create(2, error);
}

// Rank 0 waited alone: its communicator turned to ncclSystemError with a report that says it
// timed out (returned for more checks); rank 1, which launched nothing, is still healthy.
std::string expect_rank0_timed_out(const World& w) {
  ncclResult_t async = ncclSuccess;
  EXPECT_EQ(ncclCommGetAsyncError(w.comm(0), &async), ncclSuccess);
  EXPECT_EQ(async, ncclSystemError);
  std::string report = ncclGetLastError(w.comm(0));
  EXPECT_NE(report.find("timed out"), std::string::npos) << report;
  EXPECT_EQ(ncclCommGetAsyncError(w.comm(1), &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  return report;
}


TEST_F(Stall, MissingPeerTimesOutAndTheErrorNamesTheWord) {
  std::string error;
  const std::unique_ptr<World> w = impatient_world(&error);
  ASSERT_TRUE(w) << error;
  constexpr std::size_t kCount = 4096;
  float* send = nullptr;
  float* recv = nullptr;
  {
    const ScopedDevice on(w->device(0));  // rank 0's buffers
    ASSERT_EQ(cudaMalloc(&send, kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&recv, 2 * kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(send, 0, kCount * sizeof(float)), cudaSuccess);
  }
  ASSERT_EQ(w->synchronize_devices(), cudaSuccess);

  // Rank 0 alone: a kernel launch error would show at the call or the synchronize.
  ASSERT_EQ(ncclAllGather(send, recv, kCount, ncclFloat32, w->comm(0), w->stream(0)), ncclSuccess);
  ASSERT_EQ(cudaStreamSynchronize(w->stream(0)), cudaSuccess);

  const std::string report = expect_rank0_timed_out(*w);
  EXPECT_NE(report.find("from rank 1"), std::string::npos) << report;
  EXPECT_NE(report.find("CTAs had started"), std::string::npos) << report;
  EXPECT_EQ(report.find("(not:"), std::string::npos) << report;  // every CTA of rank 0 ran
  cudaFree(send);
  cudaFree(recv);
}

// Point-to-point: a receive whose sender never sends times out; the error names the pair (the
// ready word or packet from rank 1), and rank 1, which called nothing, stays healthy. Both
// regimes: 64 bytes travel as packets, 1 MiB staged.
TEST_F(Stall, MissingSenderTimesOutAndTheErrorNamesThePair) {
  for (const std::size_t bytes : {std::size_t{64}, std::size_t{1} << 20}) {
    std::string error;
    const std::unique_ptr<World> w = impatient_world(&error);
    ASSERT_TRUE(w) << error;
    void* recv = nullptr;
    {
      const ScopedDevice on(w->device(0));  // rank 0's buffer
      ASSERT_EQ(cudaMalloc(&recv, bytes), cudaSuccess);
    }
    ASSERT_EQ(ncclRecv(recv, bytes, ncclUint8, 1, w->comm(0), w->stream(0)), ncclSuccess);
    ASSERT_EQ(cudaStreamSynchronize(w->stream(0)), cudaSuccess);
    const std::string report = expect_rank0_timed_out(*w);
    EXPECT_NE(report.find("point-to-point"), std::string::npos) << report;
    EXPECT_NE(report.find("rank 1"), std::string::npos) << report;
    cudaFree(recv);
  }
}

}  // namespace
}  // namespace purlin::native_test
