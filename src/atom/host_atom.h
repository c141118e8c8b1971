// The host Atom: the Atom interface for CPU code, so that SNAC's orchestration runs in CI with CPU
// threads standing in for CTAs (DESIGN.md section 3). It runs the GPU's own chunking, windowing,
// realignment and element-combining code with one thread and synchronous copies (HostExec), so
// its tests also check the arithmetic the GPU Atoms are built on.
//
// Contract: one thread per call; `workspace` is Config::workspace_bytes of 16-byte aligned memory
// owned by that thread, or nullptr for a thread-local buffer; a Workspace may be smaller, as on
// the GPU (its slots shrink with it). Results are bitwise identical to the GPU Atoms' for the same
// inputs.
#pragma once

#include "atom/call.h"
#include "atom/combine.h"
#include "atom/config.h"
#include "atom/exec.h"
#include "atom/staged_pipeline.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace purlin::atom {

template <class Cfg = DefaultConfig>
struct HostAtom {
  using config = Cfg;
  static constexpr std::size_t workspace_bytes = Cfg::workspace_bytes;

  static void copy(void* dst, const void* src, std::size_t bytes, Workspace workspace) {
    run(dst, OneSource{reinterpret_cast<std::uintptr_t>(src)}, bytes, CopyCombiner{}, workspace);
  }
  static void copy(void* dst, const void* src, std::size_t bytes, void* workspace) {
    copy(dst, src, bytes, Workspace{workspace, Cfg::workspace_bytes});
  }

  template <Element E, ReduceOp Op>
  static void reduce(void* dst, const void* const* sources, int n, std::size_t bytes,
                     Workspace workspace, OpArg<E> arg = {}) {
    assert(n >= 1 && bytes % sizeof(E) == 0);
    run(dst, SourceArray{sources, n}, bytes, ReduceCombiner<E, Op>{Reducer<E, Op>(n, arg)},
        workspace);
  }
  template <Element E, ReduceOp Op>
  static void reduce(void* dst, const void* const* sources, int n, std::size_t bytes,
                     void* workspace, OpArg<E> arg = {}) {
    reduce<E, Op>(dst, sources, n, bytes, Workspace{workspace, Cfg::workspace_bytes}, arg);
  }

 private:
  using Body = PipelinedBody<Cfg::stages, Cfg::unroll, CpAsyncFetch<Cfg::stages>, Cfg::pipeline_sources>;

  template <class Src, class Comb>
  static void run(void* dst, const Src& src, std::size_t bytes, const Comb& comb, Workspace workspace) {
    if (workspace.base == nullptr) workspace = {thread_workspace(), Cfg::workspace_bytes};
    const auto slots = reinterpret_cast<std::uintptr_t>(workspace.base) + kWorkspaceHeaderBytes;
    atom_call(HostExec{}, reinterpret_cast<std::uintptr_t>(dst), src, bytes, comb,
              Body{slots, Cfg::stage_bytes_within(workspace.bytes), CpAsyncFetch<Cfg::stages>{}});
  }

  static void* thread_workspace() {
    thread_local std::unique_ptr<Pack[]> ws(new Pack[Cfg::workspace_bytes / sizeof(Pack)]);
    return ws.get();
  }
};

}  // namespace purlin::atom
