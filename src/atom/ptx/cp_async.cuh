// Raw PTX: cp.async (sm_80+). Before sm_80 the same calls degrade to a synchronous load and shared
// store, so code written against them stays correct on any GPU.
#pragma once

#include "atom/ptx/memory.cuh"

#include <nv/target>

#include <cstdint>

namespace purlin::atom::ptx {

// 16 bytes global -> shared, cached in L2 only (.cg): the Atom streams, L1 reuse would be nil.
__device__ __forceinline__ void cp_async_cg_16(std::uint32_t smem, const void* global) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_80,
      (asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(global)
                    : "memory");),
      (st_shared_v4(smem, *static_cast<const uint4*>(global));))
}

__device__ __forceinline__ void cp_async_commit() {
  NV_IF_TARGET(NV_PROVIDES_SM_80, (asm volatile("cp.async.commit_group;" ::: "memory");))
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  NV_IF_TARGET(NV_PROVIDES_SM_80, (asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");))
}

}  // namespace purlin::atom::ptx
