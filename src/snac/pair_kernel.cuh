// The point-to-point kernel (pairs.h): one CTA per worker of a PairLaunch, the Atom of the
// architecture being compiled, the same device backend as the collectives. The launch bridge
// (src/launch/pairs.h) launches
//
//   pair_kernel<Cfg, N><<<launch.workers, Cfg::threads, kernel_smem_bytes(workspace, ranks),
//                         stream>>>(handle, launch, control);
//
// with every CTA co-resident (pairs.h: why it cannot deadlock). The launch travels in the
// kernel's parameters (no device allocation per call; a CUDA graph records it with the launch).
#pragma once

#include "atom/atom.cuh"
#include "atom/ptx/memory.cuh"
#include "snac/device_backend.cuh"
#include "snac/kernel.cuh"
#include "snac/pairs.h"

namespace purlin::snac {

template <class Cfg, int N>
__global__ void __launch_bounds__(Cfg::threads, 1)
    pair_kernel(PairHandle handle, const __grid_constant__ PairLaunch<N> launch, DeviceControl control) {
  extern __shared__ __align__(128) unsigned char smem[];
  const std::size_t workspace = atom::ptx::dynamic_smem_bytes() - source_table_bytes(handle.ranks);
  auto** table = reinterpret_cast<const void**>(smem + workspace);
  const DeviceBackend<atom::NativeAtom<Cfg>> be(atom::Workspace{smem, workspace}, table, control);
  const Status s = run_pairs(be, handle, launch);
  if (s != Status::ok && threadIdx.x == 0 && control.status != nullptr) {
    atomicCAS(control.status, 0u, static_cast<unsigned>(s));
  }
}

}  // namespace purlin::snac
