// The register path (the generic Atom of any sm_70+ GPU, and the fallback of the pipelines for
// small ranges): each thread keeps `Unroll` independent 16-byte loads per source in flight, then
// combines and stores. Coalesced: consecutive threads touch consecutive packs.
#pragma once

#include "atom/combine.h"
#include "atom/pack.h"
#include "atom/plan.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

template <class Exec>
__host__ __device__ __forceinline__ Pack load_block(const Exec& ex, std::uintptr_t g,
                                                    const SourceView& v) {
  return block_in_range(g, v) ? ex.ldg16(g) : load_partial(g, v.lo, v.hi);
}

// Pack `p` of the body as the destination sees it. A source misaligned relative to the destination
// costs a second aligned load (which the neighbouring thread also makes, so it is an L1 hit, not
// extra DRAM or NVLink traffic) and four funnel shifts.
template <class Exec>
__host__ __device__ __forceinline__ Pack load_pack(const Exec& ex, const SourceView& v,
                                                   std::size_t p) {
  const std::uintptr_t g = v.first + 16 * p;
  const Pack lo = load_block(ex, g, v);
  if (v.shift == 0) return lo;
  return extract(lo, load_block(ex, g + 16, v), v.shift);
}

template <int Unroll>
struct VectorBody {
  template <class Exec, class Src, class Comb>
  __host__ __device__ __forceinline__ void operator()(const Exec& ex, const BodyRange& r,
                                                      const Src& src, const Comb& comb) const {
    constexpr std::size_t T = Exec::threads;
    const std::size_t packs = r.bytes / 16;
    for (std::size_t base = static_cast<std::size_t>(ex.tid()); base < packs; base += T * Unroll) {
      typename Comb::State st[Unroll] = {};
      for (int s = 0; s < src.count(); ++s) {
        const SourceView v = source_view(src.addr(s), r.offset, r.total);
        Pack x[Unroll] = {};
        PURLIN_UNROLL
        for (int u = 0; u < Unroll; ++u) {
          if (base + u * T < packs) x[u] = load_pack(ex, v, base + u * T);
        }
        PURLIN_UNROLL
        for (int u = 0; u < Unroll; ++u) {
          if (s == 0) {
            st[u] = comb.first(x[u]);
          } else {
            comb.next(st[u], x[u]);
          }
        }
      }
      PURLIN_UNROLL
      for (int u = 0; u < Unroll; ++u) {
        if (base + u * T < packs) ex.stg16(r.dst + 16 * (base + u * T), comb.finish(st[u]));
      }
    }
  }
};

}  // namespace purlin::atom
