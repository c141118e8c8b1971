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

// A growable device allocation; contents are not preserved when it grows.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  cudaError_t reserve(std::size_t bytes);
  unsigned char* get() const { return p_; }

 private:
  unsigned char* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// A growable pinned host allocation (fast downloads of large results).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { cudaFreeHost(p_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  PinnedBuffer& operator=(PinnedBuffer&&) = delete;
  cudaError_t reserve(std::size_t bytes);
  unsigned char* get() const { return p_; }

 private:
  unsigned char* p_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace purlin::native_test
