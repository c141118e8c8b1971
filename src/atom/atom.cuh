// Atom selection: which datapath each GPU generation gets, decided at compile time.
#pragma once

#include "atom/config.h"
#include "atom/device_atom.cuh"
#include "atom/generic_vector.cuh"
#include "atom/sm80_pipeline.cuh"
#include "atom/sm90_bulk.cuh"

#include <nv/target>

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

namespace arch {
struct Sm70 {};
struct Sm80 {};
struct Sm90 {};
struct Sm100 {};
}  // namespace arch

template <class Arch, class Cfg>
struct AtomSelect;
template <class Cfg>
struct AtomSelect<arch::Sm70, Cfg> {
  using type = GenericVector<Cfg>;
  using engine = GenericVectorEngine<Cfg>;
};
template <class Cfg>
struct AtomSelect<arch::Sm80, Cfg> {
  using type = Sm80Pipeline<Cfg>;
  using engine = Sm80PipelineEngine<Cfg>;
};
// Hopper and Blackwell keep cp.async until perf/atom measures the bulk-copy Atom faster (the paper
// found cp.async ~10-12% ahead of TMA on H200, and it leaves TMA free for fused compute).
template <class Cfg>
struct AtomSelect<arch::Sm90, Cfg> : AtomSelect<arch::Sm80, Cfg> {};
template <class Cfg>
struct AtomSelect<arch::Sm100, Cfg> : AtomSelect<arch::Sm90, Cfg> {};

// Atom<Arch, Config>::copy / ::reduce<E, Op> (DESIGN.md section 3) for an explicit architecture.
template <class Arch, class Cfg = DefaultConfig>
using Atom = typename AtomSelect<Arch, Cfg>::type;

// The Atom of whatever architecture the device code is being compiled for: one source, and each
// -arch target of a fat binary gets its own datapath.
template <class Cfg>
struct NativeEngine {
  template <class Src, class Comb>
  __device__ __forceinline__ static void run(std::uintptr_t dst, const Src& src, std::size_t bytes,
                                             const Comb& comb, Workspace workspace) {
    NV_DISPATCH_TARGET(
        NV_PROVIDES_SM_100,
        (AtomSelect<arch::Sm100, Cfg>::engine::run(dst, src, bytes, comb, workspace);),
        NV_PROVIDES_SM_90,
        (AtomSelect<arch::Sm90, Cfg>::engine::run(dst, src, bytes, comb, workspace);),
        NV_PROVIDES_SM_80,
        (AtomSelect<arch::Sm80, Cfg>::engine::run(dst, src, bytes, comb, workspace);),
        NV_ANY_TARGET,
        (AtomSelect<arch::Sm70, Cfg>::engine::run(dst, src, bytes, comb, workspace);))
  }
};

template <class Cfg = DefaultConfig>
using NativeAtom = DeviceAtom<NativeEngine<Cfg>, Cfg>;

}  // namespace purlin::atom
