// Which GPU each rank of the native tests runs on. By default every rank shares GPU 0, the
// layout NCCL refuses and Purlin adds (DESIGN.md section 5); PURLIN_TEST_GPUS=G spreads the
// ranks of one process over GPUs 0..G-1 (rank r on GPU r % G), and a process that is one rank
// of a job takes its GPU from PURLIN_TEST_DEVICE or LOCAL_RANK.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace purlin::native_test {

// The GPUs CUDA shows this process; 0 without any (or without a driver).
int visible_gpus();

// The GPUs the ranks of one process spread over: PURLIN_TEST_GPUS, default 1. -1 with *error
// when the value is not a positive count or names more GPUs than are visible, so that a run
// meant for several GPUs never quietly runs on fewer.
int world_gpus(std::string* error);

inline int rank_device(int rank, int gpus) { return rank % gpus; }

// Waits for all work on GPUs 0..gpus-1: the ranks' streams are non-blocking, so work issued on
// the legacy stream (a pageable copy's DMA, cudaMemset) is only known done after this.
cudaError_t synchronize_devices(int gpus);

// The GPU of a process that is one rank: `variable` (PURLIN_TEST_DEVICE for the tests) when
// set, so that a script's explicit placement wins over what a launcher left in the
// environment, else LOCAL_RANK (as torchrun and mpirun wrappers set it), else 0. -1 with *error
// when the value is not a visible device.
int process_device(const char* variable, std::string* error);

// Makes process_device("PURLIN_TEST_DEVICE") current for rank `rank` of a job and returns it;
// -1, with one line on stderr that names the rank and the reason, when it cannot.
int use_process_device(int rank);

// Makes `device` current for one scope, then puts back the caller's device. A stream, event or
// allocation belongs to the device current when it is made, and a launch or memset into a
// stream of another device fails, so every per-rank step runs on the rank's GPU; the caller's
// own device never moves.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    cudaGetDevice(&saved_);
    error_ = cudaSetDevice(device);
  }
  ~ScopedDevice() { cudaSetDevice(saved_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  cudaError_t error() const { return error_; }

 private:
  int saved_ = 0;
  cudaError_t error_ = cudaSuccess;
};

}  // namespace purlin::native_test
