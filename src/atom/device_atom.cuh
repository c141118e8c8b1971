// What every device Atom shares: the CTA execution context (DeviceExec, see exec.h for the concept)
// and the public copy/reduce entry points, which only wrap the arguments into a source accessor and
// a combiner before handing them to the Atom's engine.
#pragma once

#include "atom/combine.h"
#include "atom/config.h"
#include "atom/pack.h"
#include "atom/ptx/cp_async.cuh"
#include "atom/ptx/memory.cuh"
#include "atom/types.h"

#include <cassert>
#include <cstddef>
#include <cstdint>

namespace purlin::atom {

template <int Threads>
struct DeviceExec {
  using Smem = std::uint32_t;
  static constexpr int threads = Threads;
  __device__ __forceinline__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ __forceinline__ void sync() const { __syncthreads(); }
  __device__ __forceinline__ Pack ldg16(std::uintptr_t g) const { return ptx::ld_global_v4(g); }
  __device__ __forceinline__ void stg16(std::uintptr_t g, const Pack& v) const {
    ptx::st_global_v4(g, v);
  }
  __device__ __forceinline__ Pack lds16(Smem a) const { return ptx::ld_shared_v4(a); }
  __device__ __forceinline__ void sts16(Smem a, const Pack& v) const { ptx::st_shared_v4(a, v); }
  __device__ __forceinline__ void fetch16(Smem a, std::uintptr_t g) const {
    ptx::cp_async_cg_16(a, reinterpret_cast<const void*>(g));
  }
  __device__ __forceinline__ void commit() const { ptx::cp_async_commit(); }
  template <int N>
  __device__ __forceinline__ void wait_prior() const {
    ptx::cp_async_wait<N>();
  }
};

// Engine: a class with
//   template <class Src, class Comb>
//   __device__ static void run(std::uintptr_t dst, const Src&, std::size_t bytes, const Comb&,
//                              Workspace workspace);
// A `void* workspace` is one of Cfg::workspace_bytes; a Workspace may be smaller (any size,
// even 0: the pipeline's slots shrink with it, down to the register path).
template <class Engine, class Cfg>
struct DeviceAtom {
  using config = Cfg;
  static constexpr int threads = Cfg::threads;
  static constexpr std::size_t workspace_bytes = Cfg::workspace_bytes;

  __device__ __forceinline__ static void copy(void* dst, const void* src, std::size_t bytes,
                                              Workspace workspace) {
    assert(blockDim.x == Cfg::threads && blockDim.y == 1 && blockDim.z == 1);
    Engine::run(reinterpret_cast<std::uintptr_t>(dst),
                OneSource{reinterpret_cast<std::uintptr_t>(src)}, bytes, CopyCombiner{}, workspace);
  }
  __device__ __forceinline__ static void copy(void* dst, const void* src, std::size_t bytes,
                                              void* workspace) {
    copy(dst, src, bytes, Workspace{workspace, Cfg::workspace_bytes});
  }

  template <Element E, ReduceOp Op>
  __device__ __forceinline__ static void reduce(void* dst, const void* const* sources, int n,
                                                std::size_t bytes, Workspace workspace,
                                                OpArg<E> arg = {}) {
    assert(blockDim.x == Cfg::threads && blockDim.y == 1 && blockDim.z == 1);
    assert(n >= 1 && bytes % sizeof(E) == 0);
    Engine::run(reinterpret_cast<std::uintptr_t>(dst), SourceArray{sources, n}, bytes,
                ReduceCombiner<E, Op>{Reducer<E, Op>(n, arg)}, workspace);
  }
  template <Element E, ReduceOp Op>
  __device__ __forceinline__ static void reduce(void* dst, const void* const* sources, int n,
                                                std::size_t bytes, void* workspace,
                                                OpArg<E> arg = {}) {
    reduce<E, Op>(dst, sources, n, bytes, Workspace{workspace, Cfg::workspace_bytes}, arg);
  }
};

}  // namespace purlin::atom
