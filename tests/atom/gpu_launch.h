// Host-side entry points of the GPU test kernels (gpu_kernels.cuh), so the test driver is plain C++
// and each element type's kernels compile in their own translation unit.
#pragma once

#include "atom/types.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace purlin::atom::test {

inline constexpr int kMaxTestSources = 8;

// The Atom variants under test: different datapaths, configurations and CTA counts, which must
// all produce bitwise-identical results.
struct VariantInfo {
  const char* name;
  int grid;    // CTAs for small calls; large calls use 8x
  int min_cc;  // lowest compute capability (major * 10 + minor) the variant runs on
};
inline constexpr int kReduceVariants = 4;
inline constexpr int kCopyVariants = 5;
VariantInfo reduce_variant(int v);
VariantInfo copy_variant(int v);

// op indexes ReduceOps. sources: host array of n device pointers.
template <class E>
cudaError_t launch_reduce(int variant, int op, void* dst, const void* const* sources, int n,
                          std::size_t bytes, OpArg<E> arg, int grid, cudaStream_t stream);

cudaError_t launch_copy(int variant, void* dst, const void* src, std::size_t bytes, int grid,
                        cudaStream_t stream);

// Device-side helpers for the huge-copy test: fill with a position hash / count mismatches.
cudaError_t fill_pattern(void* p, std::size_t bytes, cudaStream_t stream);
cudaError_t count_mismatches(const void* a, const void* b, std::size_t bytes,
                             unsigned long long* count, cudaStream_t stream);

}  // namespace purlin::atom::test
