// Raw PTX: mbarriers and 1-D bulk copies (the TMA engine without tensor maps), sm_90+. On older
// GPUs these trap: only the sm_90 Atom calls them, and it is selected only for sm_90+.
#pragma once

#include <nv/target>

#include <cstdint>

namespace purlin::atom::ptx {

__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, std::uint32_t count) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");),
      (__trap();))
}

__device__ __forceinline__ void mbarrier_inval(std::uint32_t bar) {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90,
                    (asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory");),
                    (__trap();))
}

// Makes generic-proxy writes to shared memory (mbarrier initialization) visible to the async proxy.
__device__ __forceinline__ void fence_proxy_async_shared() {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (asm volatile("fence.proxy.async.shared::cta;" ::: "memory");),
                    (__trap();))
}

// Makes async-proxy writes to global memory (bulk stores) visible to generic-proxy accesses.
__device__ __forceinline__ void fence_proxy_async_global() {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (asm volatile("fence.proxy.async.global;" ::: "memory");),
                    (__trap();))
}

// One arrival that also announces `bytes` more of transactions for the current phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                    "r"(bytes)
                    : "memory");),
      (__trap();))
}

// Announces `bytes` more of transactions for the current phase, without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(bytes)
                    : "memory");),
      (__trap();))
}

__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");),
      (__trap();))
}

__device__ __forceinline__ bool mbarrier_try_wait_parity(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile(
           "{\n\t.reg .pred p;\n\t"
           "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
           "selp.u32 %0, 1, 0, p;\n\t}"
           : "=r"(done)
           : "r"(bar), "r"(parity)
           : "memory");),
      (__trap();))
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait_parity(std::uint32_t bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// global -> shared, completing `bytes` transactions on `bar`. Addresses 16-byte aligned, bytes a
// multiple of 16. A CTA launched without clusters is its own cluster, so its shared::cta
// addresses are valid shared::cluster addresses.
__device__ __forceinline__ void bulk_load(std::uint32_t smem, const void* global, std::uint32_t bytes,
                                          std::uint32_t bar) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                    "%2, [%3];" ::"r"(smem),
                    "l"(global), "r"(bytes), "r"(bar)
                    : "memory");),
      (__trap();))
}

// shared -> global, tracked by bulk groups of the issuing thread.
__device__ __forceinline__ void bulk_store(void* global, std::uint32_t smem, std::uint32_t bytes) {
  NV_IF_ELSE_TARGET(
      NV_PROVIDES_SM_90,
      (asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(global),
                    "r"(smem), "r"(bytes)
                    : "memory");),
      (__trap();))
}

__device__ __forceinline__ void bulk_commit() {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (asm volatile("cp.async.bulk.commit_group;" ::: "memory");),
                    (__trap();))
}

// At most N bulk groups still reading their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90,
                    (asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");),
                    (__trap();))
}

// At most N bulk groups not yet complete (writes performed).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90,
                    (asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");),
                    (__trap();))
}

}  // namespace purlin::atom::ptx
