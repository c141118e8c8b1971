// Compile-time configuration of an Atom: the knobs the codesign policies tune (DESIGN.md section 4).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

// Shared memory at the start of the workspace for the pipeline's mbarriers (one 8-byte barrier per
// stage, TMA variant); the stage slots follow, 128-byte aligned.
inline constexpr std::size_t kWorkspaceHeaderBytes = 128;

// The shared memory one Atom call may use: `bytes` at `base` (128-byte aligned). A device's
// per-block limit decides how much a kernel gets (launch/kernel_smem.h), so the pipeline's slots
// are sized at run time from it (Config::stage_bytes_within). A null base on the host Atom is its
// thread-local buffer of Config::workspace_bytes.
struct Workspace {
  void* base = nullptr;
  std::size_t bytes = 0;
};

// Threads:    blockDim.x of the calling CTA (1-D blocks), a multiple of 32.
// Stages:     pipeline slots S; S - 1 fetches are in flight while one slot is consumed.
// StageBytes: bytes of one slot at most, shared by all sources of a reduce (each gets
//             stage_bytes / n). A smaller workspace gets smaller slots, never fewer: the
//             count is what cp.async.wait_group and the mbarriers are compiled for.
// Unroll:     16-byte packs per thread and source in flight on the register (generic) path.
// PipelineSources: the most sources a call may have to take the pipeline (staged_pipeline.h);
//             reductions over more take the register path. Each source byte crosses shared
//             memory twice in the pipeline and not at all in registers: 1 (copies only) since
//             an 8-source bf16 reduce reached 73% of HBM with 64 CTAs in registers against 22%
//             in the pipeline (perf/atom/results/h200-20261204-registers).
// Bytes in flight per CTA on the pipeline path: (Stages - 1) * StageBytes.
template <int Threads = 256, int Stages = 8, int StageBytes = 16384, int Unroll = 4,
          int PipelineSources = 1>
struct Config {
  static constexpr int threads = Threads;
  static constexpr int stages = Stages;
  static constexpr int stage_bytes = StageBytes;
  static constexpr int unroll = Unroll;
  static constexpr int pipeline_sources = PipelineSources;
  // The most dynamic shared memory a calling CTA can use, 128-byte aligned. The same on every
  // architecture, so a host launch computes it without knowing which Atom the GPU runs.
  static constexpr std::size_t workspace_bytes =
      kWorkspaceHeaderBytes + static_cast<std::size_t>(Stages) * StageBytes;

  // The slot size a workspace of `bytes` holds: StageBytes at most, 128-byte multiples so that
  // slots stay aligned, 0 below kMinStageBytes (then every call takes the register path, which
  // needs no shared memory).
  static constexpr std::uint32_t kMinStageBytes = 256;
  __host__ __device__ static constexpr std::uint32_t stage_bytes_within(std::size_t bytes) {
    if (bytes <= kWorkspaceHeaderBytes) return 0;
    const std::size_t per = ((bytes - kWorkspaceHeaderBytes) / Stages) & ~std::size_t{127};
    if (per < kMinStageBytes) return 0;
    return static_cast<std::uint32_t>(per < StageBytes ? per : StageBytes);
  }

  static_assert(Threads >= 32 && Threads <= 1024 && Threads % 32 == 0, "whole warps, <= 1024");
  static_assert(Stages >= 1 && Stages * 8 <= static_cast<int>(kWorkspaceHeaderBytes),
                "1 to 16 stages (one mbarrier each in the header)");
  static_assert(StageBytes >= static_cast<int>(kMinStageBytes) && StageBytes % 128 == 0, "slots stay 128-byte aligned");
  static_assert(Unroll >= 1 && Unroll <= 16, "1 to 16 packs per thread in flight");
  static_assert(PipelineSources >= 1 && PipelineSources <= 16, "the pipeline's shift register");
};

// The paper's H200 point: 256 threads, 8 stages of 16 KiB (372 GB/s pulled over NVLink with 8 CTAs).
using DefaultConfig = Config<>;

}  // namespace purlin::atom
