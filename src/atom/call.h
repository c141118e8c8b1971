// One Atom call: scalar head, vector body, scalar tail (DESIGN.md section 3: any byte count, any
// alignment, nothing dropped). Generic over the execution context and the body engine.
#pragma once

#include "atom/combine.h"
#include "atom/plan.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

// Bytes [begin, end) of the call, one element per thread per step. Covers the < 16-byte head and
// tail, and whole calls whose destination is not element-aligned.
template <class Exec, class Comb, class Src>
__host__ __device__ __forceinline__ void element_range(const Exec& ex, std::uintptr_t dst,
                                                       const Src& src, std::size_t begin,
                                                       std::size_t end, const Comb& comb) {
  constexpr std::size_t es = Comb::elem_size;
  for (std::size_t off = begin + static_cast<std::size_t>(ex.tid()) * es; off < end;
       off += static_cast<std::size_t>(Exec::threads) * es) {
    comb.element(dst, src, off);
  }
}

// Body: a callable (const Exec&, const BodyRange&, const Src&, const Comb&) that writes the vector
// body. Every thread of the CTA must make the same call (bodies synchronize internally).
template <class Exec, class Comb, class Src, class Body>
__host__ __device__ __forceinline__ void atom_call(const Exec& ex, std::uintptr_t dst,
                                                   const Src& src, std::size_t bytes,
                                                   const Comb& comb, const Body& body) {
  const Split sp = split(dst, bytes, Comb::elem_size);
  element_range(ex, dst, src, 0, sp.head, comb);
  element_range(ex, dst, src, sp.head + sp.body, bytes, comb);
  if (sp.body != 0) {
    body(ex, BodyRange{dst + sp.head, sp.head, sp.body, bytes}, src, comb);
  }
}

}  // namespace purlin::atom
