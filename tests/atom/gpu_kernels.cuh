// GPU test kernels: each CTA takes a 16-byte-grain slice of the call and runs one Atom on it.
#pragma once

#include "gpu_launch.h"
#include "atom/sliced_kernels.cuh"
#include "purlin/atom.cuh"

#include <cstddef>

namespace purlin::atom::test {

template <class A, int Grid, int MinCc>
struct Variant {
  using atom = A;
  static constexpr int grid = Grid;
  static constexpr int min_cc = MinCc;
};

// Reduce: generic (1 CTA), a small cp.async pipeline (3 CTAs, 2 KiB stages: many chunks, 256-byte
// slots per source at n = 8), the bulk-copy pipeline (5 CTAs), both with reductions in shared
// memory (pipeline_sources 16), the native default (16 CTAs, reductions in registers).
using ReduceVariants =
    TypeList<Variant<GenericVector<Config<128, 1, 256, 2>>, 1, 70>,
             Variant<Sm80Pipeline<Config<128, 2, 2048, 1, 16>>, 3, 80>,
             Variant<Sm90Bulk<Config<256, 3, 8192, 4, 16>>, 5, 90>,
             Variant<NativeAtom<DefaultConfig>, 16, 70>>;
// Copy: the same plus the all-bulk copy (bulk loads and bulk stores).
using CopyVariants =
    TypeList<Variant<GenericVector<Config<128, 1, 256, 2>>, 1, 70>,
             Variant<Sm80Pipeline<Config<128, 2, 2048, 1>>, 3, 80>,
             Variant<Sm90Bulk<Config<256, 3, 8192, 4>>, 5, 90>,
             Variant<Sm90Bulk<Config<128, 4, 4096, 4>, true>, 6, 90>,
             Variant<NativeAtom<DefaultConfig>, 16, 70>>;
static_assert(ReduceVariants::size == kReduceVariants && CopyVariants::size == kCopyVariants);

using SourcePtrs = SourceTable<kMaxTestSources>;

template <class Kernel, class... Args>
cudaError_t launch(Kernel kernel, int threads, std::size_t smem, int grid, cudaStream_t stream,
                   Args... args) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  kernel<<<grid, threads, smem, stream>>>(args...);
  return cudaGetLastError();
}

// Index -> type for the runtime variant and op numbers (the one runtime-to-template bridge here).
template <class List, class F>
cudaError_t with_type_at(int index, F&& f) {
  return [&]<class... Ts>(TypeList<Ts...>) {
    cudaError_t err = cudaErrorInvalidValue;
    int i = 0;
    (void)((i++ == index ? (err = f.template operator()<Ts>(), true) : false) || ...);
    return err;
  }(List{});
}

template <class E>
cudaError_t launch_reduce(int variant, int op, void* dst, const void* const* sources, int n,
                          std::size_t bytes, OpArg<E> arg, int grid, cudaStream_t stream) {
  SourcePtrs ptrs{};
  for (int s = 0; s < n && s < kMaxTestSources; ++s) ptrs.p[s] = sources[s];
  return with_type_at<ReduceVariants>(variant, [&]<class V>() {
    return with_type_at<ReduceOps>(op, [&]<class Op>() {
      using A = typename V::atom;
      return launch(sliced_reduce<A, E, Op, kMaxTestSources>, A::threads, A::workspace_bytes, grid, stream, dst, ptrs,
                    n, bytes, arg);
    });
  });
}

}  // namespace purlin::atom::test
