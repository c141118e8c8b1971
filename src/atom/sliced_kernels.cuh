// Kernels that spread one Atom call over a grid: each CTA takes its 16-byte-grain share of
// the range (slice()) and runs the Atom on it, the way SNAC hands chunks to CTAs. The GPU
// tests and the benchmarks launch the Atoms through these same kernels, so what is tested is
// what is measured.
#pragma once

#include <cstddef>

#include "atom/atom.cuh"
#include "atom/plan.h"
#include "atom/types.h"

namespace purlin::atom {

// Source pointers passed by value as a kernel parameter.
template <int MaxSources>
struct SourceTable {
  const void* p[MaxSources];
};

// Launch with A::threads threads and A::workspace_bytes of dynamic shared memory.
template <class A>
__global__ void __launch_bounds__(A::threads, 1)
    sliced_copy(void* dst, const void* src, std::size_t bytes) {
  extern __shared__ __align__(128) unsigned char ws[];
  const Slice part = slice(bytes, gridDim.x, blockIdx.x);
  A::copy(static_cast<char*>(dst) + part.begin, static_cast<const char*>(src) + part.begin,
          part.end - part.begin, ws);
}

// n <= MaxSources sources; the same launch shape as sliced_copy.
template <class A, class E, class Op, int MaxSources>
__global__ void __launch_bounds__(A::threads, 1)
    sliced_reduce(void* dst, SourceTable<MaxSources> sources, int n, std::size_t bytes, OpArg<E> arg) {
  extern __shared__ __align__(128) unsigned char ws[];
  __shared__ const void* src[MaxSources];
  const Slice part = slice(bytes, gridDim.x, blockIdx.x);
  if (threadIdx.x == 0) {
    // Constant indices keep the parameter array out of local memory.
    PURLIN_UNROLL
    for (int s = 0; s < MaxSources; ++s) {
      if (s < n) src[s] = static_cast<const char*>(sources.p[s]) + part.begin;
    }
  }
  __syncthreads();
  A::template reduce<E, Op>(static_cast<char*>(dst) + part.begin, src, n, part.end - part.begin, ws,
                            arg);
}

}  // namespace purlin::atom
