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
  // A call on the caller's own device (the common case) leaves nothing to give back; asking
  // the runtime which device is current is far cheaper than setting it again.
  ~DeviceScope() {
    if (saved_ < 0) return;
    int now = -1;
    if (cudaGetDevice(&now) != cudaSuccess) {
      (void)cudaGetLastError();
      now = -1;
    }
    if (now != saved_) (void)cudaSetDevice(saved_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace purlin::shim
