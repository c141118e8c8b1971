// The register path (the generic Atom of any sm_70+ GPU, the fallback of the pipelines for small
// ranges, and their path for reductions over more sources than Config::pipeline_sources): each
// thread keeps `Unroll` independent 16-byte loads per source in flight (of kSourceBatch sources
// at once when all are aligned), then combines and stores. Coalesced: consecutive threads touch
// consecutive packs.
#pragma once

#include "atom/combine.h"
#include "atom/pack.h"
#include "atom/plan.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

// Sources whose loads the register path of a reduction issues together (below).
inline constexpr int kSourceBatch = 4;

// Whether every source is 16-byte aligned with the destination, so that pack p of the body is
// block p of each source, whole and inside its range.
template <class Src>
__host__ __device__ __forceinline__ bool sources_aligned(const Src& src, const BodyRange& r) {
  for (int s = 0; s < src.count(); ++s) {
    if (((src.addr(s) + r.offset) & 15) != 0) return false;
  }
  return true;
}

// A reduction of aligned sources: each thread issues the loads of `Unroll` packs of
// kSourceBatch sources before it combines the first (Unroll x kSourceBatch loads in flight),
// where a source-by-source loop would wait for one source's loads before issuing the next's.
// The combine order stays source 0, 1, ..., n - 1 (combine.h).
template <int Unroll, class Exec, class Src, class Comb>
__host__ __device__ __forceinline__ void batched_body(const Exec& ex, const BodyRange& r,
                                                      const Src& src, const Comb& comb) {
  constexpr std::size_t T = Exec::threads;
  constexpr int B = kSourceBatch;
  const std::size_t packs = r.bytes / 16;
  const int n = src.count();
  for (std::size_t base = static_cast<std::size_t>(ex.tid()); base < packs; base += T * Unroll) {
    typename Comb::State st[Unroll] = {};
    for (int s0 = 0; s0 < n; s0 += B) {
      Pack x[B][Unroll] = {};
      PURLIN_UNROLL
      for (int j = 0; j < B; ++j) {
        if (s0 + j >= n) continue;
        const std::uintptr_t a = src.addr(s0 + j) + r.offset;
        PURLIN_UNROLL
        for (int u = 0; u < Unroll; ++u) {
          if (base + u * T < packs) x[j][u] = ex.ldg16(a + 16 * (base + u * T));
        }
      }
      PURLIN_UNROLL
      for (int j = 0; j < B; ++j) {
        if (s0 + j >= n) continue;
        PURLIN_UNROLL
        for (int u = 0; u < Unroll; ++u) {
          if (s0 + j == 0) {
            st[u] = comb.first(x[j][u]);
          } else {
            comb.next(st[u], x[j][u]);
          }
        }
      }
    }
    PURLIN_UNROLL
    for (int u = 0; u < Unroll; ++u) {
      if (base + u * T < packs) ex.stg16(r.dst + 16 * (base + u * T), comb.finish(st[u]));
    }
  }
}

// A thread holds Unroll x kSourceBatch loaded packs and Unroll x lanes accumulators; 1-byte
// types (16 lanes per pack) take half the unroll so that both fit without spilling (ptxas
// -warn-spills, fp8 e4m3 on sm_80).
template <int Unroll, class Exec, class Src, class Comb>
__host__ __device__ __forceinline__ void batched_sources(const Exec& ex, const BodyRange& r,
                                                         const Src& src, const Comb& comb) {
  constexpr int kUnroll = Comb::lanes > 8 && Unroll > 1 ? Unroll / 2 : Unroll;
  batched_body<kUnroll>(ex, r, src, comb);
}

template <int Unroll>
struct VectorBody {
  template <class Exec, class Src, class Comb>
  __host__ __device__ __forceinline__ void operator()(const Exec& ex, const BodyRange& r,
                                                      const Src& src, const Comb& comb) const {
    if constexpr (!std::is_same_v<Src, OneSource>) {
      if (src.count() > 1 && sources_aligned(src, r)) {
        batched_sources<Unroll>(ex, r, src, comb);
        return;
      }
    }
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
