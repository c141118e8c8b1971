// The sm_80+ Atom: cp.async shared-memory pipeline (staged_pipeline.h) with per-thread 16-byte
// copies. Keeps (S - 1) * StageBytes in flight per CTA without holding registers for them.
#pragma once

#include "atom/call.h"
#include "atom/config.h"
#include "atom/device_atom.cuh"
#include "atom/ptx/memory.cuh"
#include "atom/staged_pipeline.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

template <class Cfg>
struct Sm80PipelineEngine {
  template <class Src, class Comb>
  __device__ __forceinline__ static void run(std::uintptr_t dst, const Src& src, std::size_t bytes,
                                             const Comb& comb, Workspace workspace) {
    using Fetch = CpAsyncFetch<Cfg::stages>;
    using Body = PipelinedBody<Cfg::stages, Cfg::unroll, Fetch, Cfg::pipeline_sources>;
    const std::uintptr_t slots = ptx::smem_address(workspace.base) + kWorkspaceHeaderBytes;
    atom_call(DeviceExec<Cfg::threads>{}, dst, src, bytes, comb,
              Body{slots, Cfg::stage_bytes_within(workspace.bytes), Fetch{}});
  }
};

template <class Cfg = DefaultConfig>
using Sm80Pipeline = DeviceAtom<Sm80PipelineEngine<Cfg>, Cfg>;

}  // namespace purlin::atom
