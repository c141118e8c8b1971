// The layout headers compiled by nvcc and used in a kernel. Building this file for the
// configured architectures (sm_90 in CI) is the device-usability check; running it needs a GPU.
#include "device_probe.h"

#include <cuda_runtime.h>

namespace purlin::layout::test {
namespace {

__global__ void probe_kernel(const std::size_t* counts, int ranks, std::uint64_t* out) {
  // Constant evaluation in device code: the declarations' facts are usable in kernels as-is.
  static_assert(AllGather::notify == Notify::every_peer);
  static_assert(Scattered::region(FixedShape::uniform(4, 3), 0, 2) == Region{8, 4});
  const int k = static_cast<int>(threadIdx.x);
  if (k < ranks) probe(k, counts, ranks, out + k * kProbeValues);
}

// Frees device allocations on every path out of probe_on_device.
struct DeviceBuffers {
  std::size_t* counts = nullptr;
  std::uint64_t* out = nullptr;
  ~DeviceBuffers() {
    cudaFree(counts);
    cudaFree(out);
  }
};

}  // namespace

ProbeResult probe_on_device(const std::size_t* counts, int ranks, std::uint64_t* out) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();  // clear the sticky "no device" error for later callers
    return ProbeResult::no_device;
  }
  const std::size_t out_bytes = sizeof(std::uint64_t) * kProbeValues * ranks;
  DeviceBuffers d;
  if (cudaMalloc(&d.counts, sizeof(std::size_t) * ranks) != cudaSuccess ||
      cudaMalloc(&d.out, out_bytes) != cudaSuccess ||
      cudaMemcpy(d.counts, counts, sizeof(std::size_t) * ranks, cudaMemcpyHostToDevice) !=
          cudaSuccess) {
    return ProbeResult::failed;
  }
  probe_kernel<<<1, ranks>>>(d.counts, ranks, d.out);
  if (cudaGetLastError() != cudaSuccess ||
      cudaMemcpy(out, d.out, out_bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return ProbeResult::failed;
  }
  return ProbeResult::ran;
}

}  // namespace purlin::layout::test
