// The generic Atom (any sm_70+ GPU): scalar head and tail, register-vectorized body. It ignores the
// workspace, so it also serves callers that have no shared memory to spare.
#pragma once

#include "atom/call.h"
#include "atom/config.h"
#include "atom/device_atom.cuh"
#include "atom/vector_path.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

template <class Cfg>
struct GenericVectorEngine {
  template <class Src, class Comb>
  __device__ __forceinline__ static void run(std::uintptr_t dst, const Src& src, std::size_t bytes,
                                             const Comb& comb, Workspace) {
    atom_call(DeviceExec<Cfg::threads>{}, dst, src, bytes, comb, VectorBody<Cfg::unroll>{});
  }
};

template <class Cfg = DefaultConfig>
using GenericVector = DeviceAtom<GenericVectorEngine<Cfg>, Cfg>;

}  // namespace purlin::atom
