// Runs a block on one CUDA device and gives the caller's thread its own device back: an
// application must never find its current device changed behind its back.
#pragma once

#include <cuda_runtime.h>

namespace purlin::shim {

class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0 || cudaGetDevice(&saved_) != cudaSuccess) {
      (void)cudaGetLastError();
      saved_ = -1;
      return;
    }
    if (saved_ != device) (void)cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (saved_ >= 0) (void)cudaSetDevice(saved_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace purlin::shim
