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

#include <nv/target>

#include "atom/atom.cuh"
#include "atom/ptx/memory.cuh"
#include "snac/device_backend.cuh"
#include "snac/kernel.cuh"
#include "snac/pairs.h"

namespace purlin::snac {

// The device backend with one difference for point-to-point: on sm_90 the Atom's bulk copies
// read through the async proxy (TMA), while the flag a receiver acquires is a generic-proxy
// access; the PTX memory model orders accesses of different proxies only across a proxy fence,
// so a copy starts with one, and a receiver's bulk reads of a peer's staging come after the
// acquire that saw the chunk published.
template <class Atom>
class PairDeviceBackend : public DeviceBackend<Atom> {
 public:
  using DeviceBackend<Atom>::DeviceBackend;
  __device__ void copy(void* dst, const void* src, std::size_t bytes) const {
    NV_IF_TARGET(NV_PROVIDES_SM_90, (asm volatile("fence.proxy.async.global;" ::: "memory");))
    DeviceBackend<Atom>::copy(dst, src, bytes);
  }
};

template <class Cfg, int N>
__global__ void __launch_bounds__(Cfg::threads, 1)
    pair_kernel(const __grid_constant__ PairHandle handle, const __grid_constant__ PairLaunch<N> launch,
                const __grid_constant__ DeviceControl control) {
  extern __shared__ __align__(128) unsigned char smem[];
  const std::size_t workspace = atom::ptx::dynamic_smem_bytes() - source_table_bytes(handle.ranks);
  auto** table = reinterpret_cast<const void**>(smem + workspace);
  DeviceWatch watch;
  const PairDeviceBackend<atom::NativeAtom<Cfg>> be(atom::Workspace{smem, workspace}, table, control, watch);
  const Status s = run_pairs(be, handle, launch);
  if (s != Status::ok && threadIdx.x == 0 && control.status != nullptr) {
    atomicCAS(control.status, 0u, static_cast<unsigned>(s));
  }
}

}  // namespace purlin::snac
