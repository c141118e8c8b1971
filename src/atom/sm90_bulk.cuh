// The sm_90+ candidate Atom: the same pipeline, fed by 1-D bulk copies (the TMA engine, no tensor
// map) that one thread issues per source window and that complete on a per-slot mbarrier. With
// BulkStore, a copy whose source and destination agree mod 16 also drains each slot with a bulk
// store, so the whole copy is two DMA streams driven by one thread.
//
// It is a candidate, not the default: DESIGN.md records cp.async ~10-12% faster than TMA on Hopper
// for 256 KiB - 1 MiB, and the Atom selection (atom.cuh) follows the benchmark in perf/atom.
#pragma once

#include "atom/call.h"
#include "atom/config.h"
#include "atom/device_atom.cuh"
#include "atom/plan.h"
#include "atom/ptx/bulk.cuh"
#include "atom/ptx/memory.cuh"
#include "atom/staged_pipeline.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

// Fetch policy (staged_pipeline.h) backed by bulk copies. Thread 0 issues the in-range run of each
// window; the at most two blocks that stick out of a source's range are assembled by two other
// threads with ordinary loads (made visible by the pipeline's __syncthreads).
template <int Stages, int Threads>
struct BulkFetch {
  static constexpr bool kPrivateBlocks = false;  // thread 0 fills every thread's blocks
  std::uint32_t bars;                             // Stages mbarriers, 8 bytes apart

  __device__ __forceinline__ std::uint32_t bar(std::size_t k) const {
    return bars + static_cast<std::uint32_t>(8 * (k % Stages));
  }
  template <class Exec>
  __device__ __forceinline__ void begin(const Exec& ex) const {
    if (ex.tid() == 0) {
      for (int j = 0; j < Stages; ++j) ptx::mbarrier_init(bar(j), 1);
      ptx::fence_proxy_async_shared();
    }
    ex.sync();
  }
  template <class Exec>
  __device__ __forceinline__ void end(const Exec& ex) const {
    if (ex.tid() == 0) {
      for (int j = 0; j < Stages; ++j) ptx::mbarrier_inval(bar(j));
    }
    ex.sync();
  }
  template <class Exec>
  __device__ __forceinline__ void window(const Exec& ex, std::size_t k, std::uint32_t smem,
                                         const SourceView& v, unsigned blocks) const {
    const std::uintptr_t last = v.first + 16 * static_cast<std::uintptr_t>(blocks - 1);
    const bool head_partial = !block_in_range(v.first, v);
    const bool tail_partial = blocks > 1 && !block_in_range(last, v);
    const unsigned b0 = head_partial ? 1 : 0;
    const unsigned b1 = tail_partial ? blocks - 1 : blocks;
    if (ex.tid() == 0 && b1 > b0) {
      const std::uint32_t bytes = 16 * (b1 - b0);
      ptx::mbarrier_expect_tx(bar(k), bytes);
      ptx::bulk_load(smem + 16 * b0, reinterpret_cast<const void*>(v.first + 16 * b0), bytes, bar(k));
    }
    if (head_partial && ex.tid() == Threads - 1) {
      ex.sts16(smem, load_partial(v.first, v.lo, v.hi));
    }
    if (tail_partial && ex.tid() == Threads - 2) {
      ex.sts16(smem + 16 * (blocks - 1), load_partial(last, v.lo, v.hi));
    }
  }
  template <class Exec>
  __device__ __forceinline__ void end_stage(const Exec& ex, std::size_t k) const {
    if (ex.tid() == 0) ptx::mbarrier_arrive(bar(k));
  }
  template <class Exec>
  __device__ __forceinline__ void skip(const Exec&) const {}
  // The t-th use of a slot completes the barrier's phase t.
  template <class Exec>
  __device__ __forceinline__ void wait(const Exec&, std::size_t k) const {
    ptx::mbarrier_wait_parity(bar(k), static_cast<std::uint32_t>((k / Stages) & 1));
  }
  template <class Exec>
  __device__ __forceinline__ void drain(const Exec&) const {}
};

// Copy with source and destination equally aligned: thread 0 streams chunks through the slots with
// a bulk load and a bulk store each. A slot is refilled once the store issued one step earlier has
// finished reading it, so S - 1 loads and up to two stores are in flight. `stage_bytes` > 0.
template <int Stages>
__device__ __forceinline__ void bulk_copy_body(const BodyRange& r, std::uintptr_t src,
                                               std::uint32_t ws, std::uint32_t stage_bytes) {
  const std::uint32_t slots = ws + static_cast<std::uint32_t>(kWorkspaceHeaderBytes);
  const std::size_t chunks = (r.bytes + stage_bytes - 1) / stage_bytes;
  const auto bar = [&](std::size_t k) { return ws + static_cast<std::uint32_t>(8 * (k % Stages)); };
  const auto slot = [&](std::size_t k) {
    return slots + static_cast<std::uint32_t>((k % Stages) * stage_bytes);
  };
  const auto length = [&](std::size_t k) {
    const std::size_t left = r.bytes - k * stage_bytes;
    return static_cast<std::uint32_t>(left < stage_bytes ? left : stage_bytes);
  };
  const auto load = [&](std::size_t k) {
    ptx::mbarrier_expect_tx(bar(k), length(k));
    ptx::bulk_load(slot(k), reinterpret_cast<const void*>(src + k * stage_bytes), length(k), bar(k));
    ptx::mbarrier_arrive(bar(k));
  };
  if (threadIdx.x == 0) {
    for (int j = 0; j < Stages; ++j) ptx::mbarrier_init(bar(j), 1);
    ptx::fence_proxy_async_shared();
    for (std::size_t j = 0; j < Stages && j < chunks; ++j) load(j);
    for (std::size_t k = 0; k < chunks; ++k) {
      ptx::mbarrier_wait_parity(bar(k), static_cast<std::uint32_t>((k / Stages) & 1));
      ptx::bulk_store(reinterpret_cast<void*>(r.dst + k * stage_bytes), slot(k), length(k));
      ptx::bulk_commit();
      if constexpr (Stages == 1) {
        ptx::bulk_wait_read<0>();
        if (k + 1 < chunks) load(k + 1);
      } else if (k >= 1 && k - 1 + Stages < chunks) {
        ptx::bulk_wait_read<1>();
        load(k - 1 + Stages);
      }
    }
    ptx::bulk_wait<0>();
    ptx::fence_proxy_async_global();
    for (int j = 0; j < Stages; ++j) ptx::mbarrier_inval(bar(j));
  }
  __syncthreads();
}

template <class Cfg, bool BulkStore>
struct Sm90BulkEngine {
  using Fetch = BulkFetch<Cfg::stages, Cfg::threads>;
  using Body = PipelinedBody<Cfg::stages, Cfg::unroll, Fetch, Cfg::pipeline_sources>;

  struct CopyBody {
    std::uint32_t ws;
    std::uint32_t stage_bytes;
    template <class Exec, class Src, class Comb>
    __device__ __forceinline__ void operator()(const Exec& ex, const BodyRange& r, const Src& src,
                                               const Comb& comb) const {
      const std::uintptr_t s0 = src.addr(0) + r.offset;
      if (stage_bytes != 0 && s0 % 16 == 0 && r.bytes >= 2 * static_cast<std::size_t>(stage_bytes)) {
        bulk_copy_body<Cfg::stages>(r, s0, ws, stage_bytes);
      } else {
        Body{ws + kWorkspaceHeaderBytes, stage_bytes, Fetch{ws}}(ex, r, src, comb);
      }
    }
  };

  template <class Src, class Comb>
  __device__ __forceinline__ static void run(std::uintptr_t dst, const Src& src, std::size_t bytes,
                                             const Comb& comb, Workspace workspace) {
    const std::uint32_t ws = ptx::smem_address(workspace.base);
    const std::uint32_t stage_bytes = Cfg::stage_bytes_within(workspace.bytes);
    const DeviceExec<Cfg::threads> ex{};
    if constexpr (BulkStore && std::is_same_v<Comb, CopyCombiner>) {
      atom_call(ex, dst, src, bytes, comb, CopyBody{ws, stage_bytes});
    } else {
      atom_call(ex, dst, src, bytes, comb, Body{ws + kWorkspaceHeaderBytes, stage_bytes, Fetch{ws}});
    }
  }
};

template <class Cfg = DefaultConfig, bool BulkStore = false>
using Sm90Bulk = DeviceAtom<Sm90BulkEngine<Cfg, BulkStore>, Cfg>;

}  // namespace purlin::atom
