// The shared-memory pipeline (DESIGN.md section 3): prime S - 1 slots, then per chunk wait for the
// oldest slot, refill the slot freed one step earlier with a new fetch, and consume the oldest:
// copy stores it, reduce accumulates all sources' windows and stores. One __syncthreads per chunk.
//
// Fetching is a policy so that the same loop runs with per-thread cp.async (sm_80+, and the host
// Atom with synchronous copies) or with one-thread bulk copies completing on an mbarrier (sm_90+).
// A Fetch provides:
//   kPrivateBlocks                    true if a thread's fetches land only where it alone reads
//                                     them once windows are aligned (see staged_body)
//   begin(ex) / end(ex)               set up / tear down (CTA-wide, called by every thread)
//   window(ex, k, smem, view, blocks) fetch `blocks` aligned 16-byte blocks from view.first for
//                                     chunk k
//   end_stage(ex, k) / skip(ex)       close the fetches of chunk k / of a chunk that does not exist
//   wait(ex, k)                       block until chunk k's fetches (of this thread) have landed
//   drain(ex)                         block until no fetch is outstanding
#pragma once

#include "atom/combine.h"
#include "atom/pack.h"
#include "atom/plan.h"
#include "atom/vector_path.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

// The pipeline keeps the per-source realignment shifts in one register, 4 bits each.
inline constexpr int kMaxPipelineSources = 16;

__host__ __device__ __forceinline__ unsigned shift_of(std::uint64_t shifts, int s) {
  return static_cast<unsigned>(shifts >> (4 * s)) & 15u;
}

// Per-thread asynchronous 16-byte copies: cp.async.cg on the GPU (L2 only: streamed data would only
// evict useful L1 lines), memcpy on the host. Blocks that stick out of a source's range (first and
// last of the call, misaligned sources only) are assembled synchronously instead.
template <int Stages>
struct CpAsyncFetch {
  static constexpr bool kPrivateBlocks = true;
  template <class Exec>
  __host__ __device__ __forceinline__ void begin(const Exec&) const {}
  template <class Exec>
  __host__ __device__ __forceinline__ void end(const Exec&) const {}
  template <class Exec>
  __host__ __device__ __forceinline__ void window(const Exec& ex, std::size_t,
                                                  typename Exec::Smem smem, const SourceView& v,
                                                  unsigned blocks) const {
    for (unsigned b = static_cast<unsigned>(ex.tid()); b < blocks; b += Exec::threads) {
      const std::uintptr_t g = v.first + 16 * static_cast<std::uintptr_t>(b);
      if (block_in_range(g, v)) {
        ex.fetch16(smem + 16 * b, g);
      } else {
        ex.sts16(smem + 16 * b, load_partial(g, v.lo, v.hi));
      }
    }
  }
  // Empty groups are committed too, so that "at most S - 2 pending" always means "chunk k landed".
  template <class Exec>
  __host__ __device__ __forceinline__ void end_stage(const Exec& ex, std::size_t) const {
    ex.commit();
  }
  template <class Exec>
  __host__ __device__ __forceinline__ void skip(const Exec& ex) const {
    ex.commit();
  }
  template <class Exec>
  __host__ __device__ __forceinline__ void wait(const Exec& ex, std::size_t) const {
    ex.template wait_prior<(Stages > 1 ? Stages - 2 : 0)>();
  }
  template <class Exec>
  __host__ __device__ __forceinline__ void drain(const Exec& ex) const {
    ex.template wait_prior<0>();
  }
};

template <class Exec>
__host__ __device__ __forceinline__ Pack read_pack(const Exec& ex, typename Exec::Smem window,
                                                   std::size_t p, unsigned shift) {
  const auto a = window + static_cast<typename Exec::Smem>(16 * p);
  const Pack lo = ex.lds16(a);
  if (shift == 0) return lo;
  return extract(lo, ex.lds16(a + 16), shift);
}

// `stage_bytes`: the slot size, a multiple of 128 (Config::stage_bytes_within).
template <int Stages, class Exec, class Fetch, class Src, class Comb>
__host__ __device__ __forceinline__ void staged_body(const Exec& ex, const Fetch& fetch,
                                                     const BodyRange& r, const Src& src,
                                                     const Comb& comb, const ChunkPlan& plan,
                                                     std::uint64_t shifts,
                                                     typename Exec::Smem slots,
                                                     std::uint32_t stage_bytes) {
  using Smem = typename Exec::Smem;
  constexpr std::size_t T = Exec::threads;
  const std::size_t chunks = plan.chunks;
  const auto slot = [&](std::size_t k) {
    return slots + static_cast<Smem>((k % Stages) * stage_bytes);
  };
  const auto length = [&](std::size_t k) {
    const std::size_t left = r.bytes - k * plan.chunk;
    return left < plan.chunk ? left : static_cast<std::size_t>(plan.chunk);
  };
  const auto issue = [&](std::size_t k) {
    const std::size_t begin = k * plan.chunk;
    const std::size_t len = length(k);
    for (int s = 0; s < src.count(); ++s) {
      const SourceView v = source_view(src.addr(s), r.offset + begin, r.total);
      fetch.window(ex, k, slot(k) + static_cast<Smem>(s * plan.stride), v,
                   window_blocks(v.shift, len));
    }
    fetch.end_stage(ex, k);
  };
  const auto consume = [&](std::size_t k) {
    const std::size_t begin = k * plan.chunk;
    const std::size_t packs = length(k) / 16;
    const Smem base = slot(k);
    for (std::size_t p = static_cast<std::size_t>(ex.tid()); p < packs; p += T) {
      typename Comb::State st = comb.first(read_pack(ex, base, p, shift_of(shifts, 0)));
      // Unrolled so that several sources' shared-memory reads are in flight at once.
      PURLIN_UNROLL_4
      for (int s = 1; s < src.count(); ++s) {
        comb.next(st, read_pack(ex, base + static_cast<Smem>(s * plan.stride), p, shift_of(shifts, s)));
      }
      ex.stg16(r.dst + begin + 16 * p, comb.finish(st));
    }
  };

  // When every source is aligned with the destination, block b of a window is pack b of the chunk,
  // and both are dealt to thread b mod T: with per-thread fetches a thread then only ever reads
  // shared memory it filled itself, after its own wait, and refills it only after its own reads
  // have returned (their values were stored before the refill is issued). No other thread is
  // involved, so the per-chunk barrier is skipped and warps stream independently. Realignment
  // (reading a neighbour's block) and bulk fetches (one thread fills everyone's blocks) need it.
  const bool shared_blocks = !Fetch::kPrivateBlocks || shifts != 0;
  const auto barrier = [&] {
    if (shared_blocks) ex.sync();
  };

  fetch.begin(ex);
  if constexpr (Stages == 1) {
    // No overlap: the depth-1 baseline of the stage sweep.
    for (std::size_t k = 0; k < chunks; ++k) {
      issue(k);
      fetch.wait(ex, k);
      barrier();
      consume(k);
      barrier();
    }
    ex.sync();  // the caller may reuse the workspace
  } else {
    for (std::size_t j = 0; j + 1 < Stages; ++j) {
      if (j < chunks) {
        issue(j);
      } else {
        fetch.skip(ex);
      }
    }
    for (std::size_t k = 0; k < chunks; ++k) {
      fetch.wait(ex, k);
      // Publishes chunk k's slot to all threads and certifies that everyone has finished consuming
      // chunk k - 1, whose slot the next fetch overwrites.
      barrier();
      if (k + Stages - 1 < chunks) {
        issue(k + Stages - 1);
      } else {
        fetch.skip(ex);
      }
      consume(k);
    }
    fetch.drain(ex);
    ex.sync();  // the caller may reuse the workspace
  }
  fetch.end(ex);
}

// The pipeline engine's body: shared memory staging when the range spans at least two chunks, the
// register path otherwise (a pipeline that cannot overlap anything only adds latency), for
// reductions over more than PipelineSources sources (Config::pipeline_sources), at most as many
// as the shift register holds, and when the workspace holds no slots (stage_bytes 0).
template <int Stages, int Unroll, class Fetch, int PipelineSources = kMaxPipelineSources>
struct PipelinedBody {
  static_assert(PipelineSources >= 1 && PipelineSources <= kMaxPipelineSources);
  std::uintptr_t slots;       // first slot's address, in the Exec's Smem representation
  std::uint32_t stage_bytes;  // bytes of each of the Stages slots: 0 or a multiple of 128 >= 256
  Fetch fetch;

  template <class Exec, class Src, class Comb>
  __host__ __device__ __forceinline__ void operator()(const Exec& ex, const BodyRange& r,
                                                      const Src& src, const Comb& comb) const {
    const int n = src.count();
    if (n <= PipelineSources && stage_bytes != 0) {
      std::uint64_t shifts = 0;
      for (int s = 0; s < n; ++s) {
        shifts |= static_cast<std::uint64_t>((src.addr(s) + r.offset) & 15) << (4 * s);
      }
      const ChunkPlan plan = chunk_plan(r.bytes, n, stage_bytes, shifts != 0);
      if (plan.chunks >= 2) {
        staged_body<Stages>(ex, fetch, r, src, comb, plan, shifts,
                            static_cast<typename Exec::Smem>(slots), stage_bytes);
        return;
      }
    }
    VectorBody<Unroll>{}(ex, r, src, comb);
  }
};

}  // namespace purlin::atom
