// Destroying a communicator on one rank while a peer's last collective still runs (issue 13):
// the destroying rank must not free memory that the peer's kernel still reads
// (src/runtime/teardown.h). Two ranks as threads on GPU 0 (placed as World places them under
// PURLIN_TEST_GPUS): rank 0 enqueues an AllReduce and destroys its communicator at once; rank 1
// enqueues its AllReduce a little later, each round a little later still, so that rank 0's
// destroy meets the peer's call at different points. Every round both results must be exact and
// no CUDA error may appear; run under compute-sanitizer memcheck, a read of freed memory would
// show as an error. PURLIN_TEARDOWN_ROUNDS (default 6) sets the rounds.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace purlin::native_test {
namespace {

int rounds() {
  const char* v = std::getenv("PURLIN_TEARDOWN_ROUNDS");
  const long n = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
  return n > 0 ? static_cast<int>(n) : 6;
}

// The count of elements of `out` (count floats) that are not `want`; -1 when it cannot be read.
long long wrong(const float* out, std::size_t count, float want) {
  std::vector<float> host(count);
  if (cudaMemcpy(host.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
  long long bad = 0;
  for (float v : host) bad += v != want ? 1 : 0;
  return bad;
}

TEST(Teardown, DestroyWhileAPeersCallIsInFlight) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  constexpr int n = 2;
  // 16 MiB: the throughput regime, whose consumers read the producer's staging or input for
  // many microseconds after the producer's own kernel may have ended.
  constexpr std::size_t count = std::size_t{4} << 20;
  std::string error;
  const int gpus = world_gpus(&error);
  ASSERT_GT(gpus, 0) << error;
  for (int round = 0; round < rounds(); ++round) {
    ncclComm_t comms[n] = {};
    int devices[n] = {rank_device(0, gpus), rank_device(1, gpus)};
    ASSERT_EQ(ncclCommInitAll(comms, n, devices), ncclSuccess) << "round " << round;
    cudaStream_t streams[n] = {};
    float* in[n] = {};
    float* out[n] = {};
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(devices[r]);
      ASSERT_EQ(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&in[r], count * sizeof(float)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&out[r], count * sizeof(float)), cudaSuccess);
      const std::vector<float> values(count, static_cast<float>(r + 1));
      ASSERT_EQ(cudaMemcpy(in[r], values.data(), count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemset(out[r], 0, count * sizeof(float)), cudaSuccess);
    }
    ASSERT_EQ(synchronize_devices(gpus), cudaSuccess);

    ncclResult_t call[n] = {ncclInternalError, ncclInternalError};
    ncclResult_t destroy[n] = {ncclInternalError, ncclInternalError};
    cudaError_t synced = cudaErrorUnknown;
    std::thread first([&] {
      cudaSetDevice(devices[0]);
      call[0] = ncclAllReduce(in[0], out[0], count, ncclFloat32, ncclSum, comms[0], streams[0]);
      destroy[0] = ncclCommDestroy(comms[0]);
    });
    std::thread second([&] {
      cudaSetDevice(devices[1]);
      std::this_thread::sleep_for(std::chrono::microseconds(500 + 700 * round));
      call[1] = ncclAllReduce(in[1], out[1], count, ncclFloat32, ncclSum, comms[1], streams[1]);
      synced = cudaStreamSynchronize(streams[1]);
      destroy[1] = ncclCommDestroy(comms[1]);
    });
    first.join();
    second.join();
    EXPECT_EQ(call[0], ncclSuccess) << "round " << round;
    EXPECT_EQ(call[1], ncclSuccess) << "round " << round;
    EXPECT_EQ(destroy[0], ncclSuccess) << "round " << round;
    EXPECT_EQ(destroy[1], ncclSuccess) << "round " << round;
    EXPECT_EQ(synced, cudaSuccess) << "round " << round;
    ASSERT_EQ(synchronize_devices(gpus), cudaSuccess) << "round " << round;
    for (int r = 0; r < n; ++r) {
      const ScopedDevice on(devices[r]);
      EXPECT_EQ(wrong(out[r], count, 3.0f), 0) << "round " << round << ", rank " << r;
      cudaFree(in[r]);
      cudaFree(out[r]);
      cudaStreamDestroy(streams[r]);
    }
  }
}

}  // namespace
}  // namespace purlin::native_test
