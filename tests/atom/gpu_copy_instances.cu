// The copy test kernels, variant metadata, and the device helpers of the huge-copy test.
#include "gpu_kernels.cuh"

#include <cstdint>

namespace purlin::atom::test {

namespace {
template <class List>
VariantInfo info(int v, const char* const* names) {
  VariantInfo out{"?", 0, 0};
  with_type_at<List>(v, [&]<class V>() {
    out = VariantInfo{names[v], V::grid, V::min_cc};
    return cudaSuccess;
  });
  return out;
}

__device__ std::uint32_t hash32(std::size_t i) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return static_cast<std::uint32_t>(x * 0xBF58476D1CE4E5B9ull >> 32);
}

__global__ void fill_kernel(unsigned char* p, std::size_t bytes) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += std::size_t{gridDim.x} * blockDim.x) {
    p[i] = static_cast<unsigned char>(hash32(i));
  }
}

__global__ void mismatch_kernel(const unsigned char* a, const unsigned char* b, std::size_t bytes,
                                unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += std::size_t{gridDim.x} * blockDim.x) {
    local += a[i] != b[i];
  }
  if (local != 0) atomicAdd(count, local);
}
}  // namespace

VariantInfo reduce_variant(int v) {
  static const char* const names[] = {"generic_vector", "sm80_pipeline_small", "sm90_bulk",
                                      "native_default"};
  return info<ReduceVariants>(v, names);
}

VariantInfo copy_variant(int v) {
  static const char* const names[] = {"generic_vector", "sm80_pipeline_small", "sm90_bulk",
                                      "sm90_bulk_store", "native_default"};
  return info<CopyVariants>(v, names);
}

cudaError_t launch_copy(int variant, void* dst, const void* src, std::size_t bytes, int grid,
                        cudaStream_t stream) {
  return with_type_at<CopyVariants>(variant, [&]<class V>() {
    using A = typename V::atom;
    return launch(sliced_copy<A>, A::threads, A::workspace_bytes, grid, stream, dst, src, bytes);
  });
}

cudaError_t fill_pattern(void* p, std::size_t bytes, cudaStream_t stream) {
  fill_kernel<<<1024, 256, 0, stream>>>(static_cast<unsigned char*>(p), bytes);
  return cudaGetLastError();
}

cudaError_t count_mismatches(const void* a, const void* b, std::size_t bytes,
                             unsigned long long* count, cudaStream_t stream) {
  cudaError_t err = cudaMemsetAsync(count, 0, sizeof(*count), stream);
  if (err != cudaSuccess) return err;
  mismatch_kernel<<<1024, 256, 0, stream>>>(static_cast<const unsigned char*>(a),
                                            static_cast<const unsigned char*>(b), bytes, count);
  return cudaGetLastError();
}

}  // namespace purlin::atom::test
