// Raw PTX: 16-byte global and shared accesses. Explicit state spaces: the Atom's addresses arrive
// as integers, from which the compiler could only emit generic (address-window checking) accesses.
#pragma once

#include <vector_types.h>

#include <cstdint>

namespace purlin::atom::ptx {

__device__ __forceinline__ std::uint32_t smem_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// The dynamic shared memory the running kernel was launched with (%dynamic_smem_size).
__device__ __forceinline__ std::uint32_t dynamic_smem_bytes() {
  std::uint32_t bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// Global accesses are volatile and clobber memory so that they stay ordered with the element
// path's plain C++ accesses and a load always precedes the in-place store to the same address.
__device__ __forceinline__ uint4 ld_global_v4(std::uintptr_t a) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(a)
               : "memory");
  return v;
}

__device__ __forceinline__ void st_global_v4(std::uintptr_t a, const uint4& v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(a), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

__device__ __forceinline__ uint4 ld_shared_v4(std::uint32_t a) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(a)
               : "memory");
  return v;
}

__device__ __forceinline__ void st_shared_v4(std::uint32_t a, const uint4& v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

}  // namespace purlin::atom::ptx
