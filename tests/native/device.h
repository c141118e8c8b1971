// Device-side helpers of the native tests (device.cu): input generation from the value tables
// and the increment the CUDA graph tests replay, plus small owning wrappers.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace purlin::native_test {

// dst[i] = table[value_index(rank, first + i)], i < count, with elements of elem_bytes (1, 2, 4
// or 8) bytes; dst must be aligned to elem_bytes.
cudaError_t fill_input(void* dst, std::size_t elem_bytes, const void* table, int rank,
                       std::size_t first, std::size_t count, cudaStream_t stream);

// p[i] += 1 for i < count (wrapping).
cudaError_t increment_i32(std::int32_t* p, std::size_t count, cudaStream_t stream);

// Every type's value table in device memory (allocated and uploaded on the current device).
class DeviceTables {
 public:
  DeviceTables();
  ~DeviceTables();
  DeviceTables(const DeviceTables&) = delete;
  DeviceTables& operator=(const DeviceTables&) = delete;
  bool ok() const { return base_ != nullptr; }
  const void* get(ncclDataType_t t) const;

 private:
  unsigned char* base_ = nullptr;
};

// A growable allocation from one of CUDA's allocators; contents are not preserved when it
// grows. Device memory for buffers, pinned host memory for fast downloads of large results.
template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Free)(void*)>
class GrowableBuffer {
 public:
  GrowableBuffer() = default;
  ~GrowableBuffer() { Free(p_); }
  GrowableBuffer(GrowableBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  GrowableBuffer& operator=(GrowableBuffer&&) = delete;
  cudaError_t reserve(std::size_t bytes) {
    if (bytes <= bytes_ && p_ != nullptr) return cudaSuccess;
    Free(p_);
    p_ = nullptr;
    bytes_ = 0;
    void* p = nullptr;
    const cudaError_t e = Alloc(&p, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) return e;
    p_ = static_cast<unsigned char*>(p);
    bytes_ = bytes;
    return cudaSuccess;
  }
  unsigned char* get() const { return p_; }

 private:
  unsigned char* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Plain function pointers: the runtime API's allocators are overloaded templates in C++.
cudaError_t device_alloc(void** p, std::size_t bytes);
cudaError_t device_free(void* p);
cudaError_t pinned_alloc(void** p, std::size_t bytes);
cudaError_t pinned_free(void* p);

using DeviceBuffer = GrowableBuffer<device_alloc, device_free>;
using PinnedBuffer = GrowableBuffer<pinned_alloc, pinned_free>;

}  // namespace purlin::native_test
