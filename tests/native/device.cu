#include "device.h"

#include <algorithm>

#include "values.h"

namespace purlin::native_test {
namespace {

// The element is moved as an unsigned integer of its width: filling does not care what it holds.
template <class W>
__global__ void fill_kernel(W* dst, const W* table, int rank, std::size_t first, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    dst[i] = table[value_index(rank, first + i)];
  }
}

__global__ void increment_kernel(std::int32_t* p, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    p[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(p[i]) + 1u);
  }
}

unsigned grid_for(std::size_t count) {
  return static_cast<unsigned>(std::clamp<std::size_t>((count + 255) / 256, 1, 1024));
}

constexpr std::size_t kMaxElemBytes = 8;

}  // namespace

cudaError_t fill_input(void* dst, std::size_t elem_bytes, const void* table, int rank,
                       std::size_t first, std::size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  switch (elem_bytes) {
    case 1:
      fill_kernel<<<grid, 256, 0, stream>>>(static_cast<std::uint8_t*>(dst),
                                            static_cast<const std::uint8_t*>(table), rank, first, count);
      break;
    case 2:
      fill_kernel<<<grid, 256, 0, stream>>>(static_cast<std::uint16_t*>(dst),
                                            static_cast<const std::uint16_t*>(table), rank, first, count);
      break;
    case 4:
      fill_kernel<<<grid, 256, 0, stream>>>(static_cast<std::uint32_t*>(dst),
                                            static_cast<const std::uint32_t*>(table), rank, first, count);
      break;
    case 8:
      fill_kernel<<<grid, 256, 0, stream>>>(static_cast<std::uint64_t*>(dst),
                                            static_cast<const std::uint64_t*>(table), rank, first, count);
      break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t increment_i32(std::int32_t* p, std::size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  increment_kernel<<<grid_for(count), 256, 0, stream>>>(p, count);
  return cudaGetLastError();
}

DeviceTables::DeviceTables() {
  const std::size_t slot = kTableSize * kMaxElemBytes;
  if (cudaMalloc(&base_, slot * kAllTypes.size()) != cudaSuccess) {
    base_ = nullptr;
    return;
  }
  for (ncclDataType_t t : kAllTypes) {
    if (cudaMemcpy(base_ + slot * static_cast<std::size_t>(t), table_bytes(t), kTableSize * type_bytes(t),
                   cudaMemcpyHostToDevice) != cudaSuccess) {
      cudaFree(base_);
      base_ = nullptr;
      return;
    }
  }
}

DeviceTables::~DeviceTables() { cudaFree(base_); }

const void* DeviceTables::get(ncclDataType_t t) const {
  return base_ + kTableSize * kMaxElemBytes * static_cast<std::size_t>(t);
}

cudaError_t device_alloc(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t device_free(void* p) { return cudaFree(p); }
cudaError_t pinned_alloc(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
cudaError_t pinned_free(void* p) { return cudaFreeHost(p); }

}  // namespace purlin::native_test
