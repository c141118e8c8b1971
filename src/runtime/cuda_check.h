// One way to report a failed CUDA runtime call from the runtime: a single WARN naming the call
// and the rank, and the error cleared so that the next call does not inherit it.
#pragma once

#include <cuda_runtime.h>

#include "base/log.h"

namespace purlin::runtime {

inline bool cuda_failed(cudaError_t err, int rank, const char* call) {
  if (err == cudaSuccess) return false;
  PURLIN_WARN("rank %d: %s failed: %s (%s)", rank, call, cudaGetErrorName(err),
              cudaGetErrorString(err));
  (void)cudaGetLastError();
  return true;
}

// Makes `device` current for a scope and restores the caller's device after: the runtime
// must not change which GPU the application's thread targets.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      (void)cudaGetLastError();
      previous_ = -1;
    }
    if (device >= 0 && device != previous_) {
      set_ = cudaSetDevice(device);
      changed_ = set_ == cudaSuccess;
    }
  }
  ~DeviceGuard() {
    if (changed_ && previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) {
      (void)cudaGetLastError();
    }
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  cudaError_t status() const { return set_; }

 private:
  int previous_ = -1;
  cudaError_t set_ = cudaSuccess;
  bool changed_ = false;
};

}  // namespace purlin::runtime
