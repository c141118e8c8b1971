// Each kernel family's Atom configuration, and the shared memory it is launched with on a given
// GPU: the compiled configurations are the most a kernel may use, the device's own per-block
// limit decides what it gets. Plain C++: the selection is tested without a GPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "atom/config.h"
#include "launch/call.h"
#include "snac/backend.h"

namespace purlin::launch {

// Measured on one H200 (perf/atom, results h200-20261202, 64 CTAs): copies keep the paper's
// point (256 threads, 8 x 16 KiB stages); reductions take 3 x 64 KiB stages, which gave 8 bf16
// sources 52% of the HBM limit against 22% with 8 x 16 KiB (each source gets stage_bytes / n of
// a slot, so small stages starve a many-source reduce). 256 threads in both keeps the register
// budget the engine was built for. On a GPU with less shared memory per block the stages stay
// and their slots shrink (atom::Config::stage_bytes_within): fewer bytes in flight per CTA, but
// as many fetches overlapped.
using CopyConfig = atom::DefaultConfig;
using ReduceConfig = atom::Config<256, 3, 65536>;
template <class C>
using KernelConfig = std::conditional_t<C::reduces, ReduceConfig, CopyConfig>;

using snac::source_table_bytes;

// What a GPU offers a block, as cudaDeviceGetAttribute reports it (H100: 232448, 233472, 1024).
struct DeviceLimits {
  int sm_major = 0;                    // ComputeCapabilityMajor
  std::size_t smem_per_block = 0;      // MaxSharedMemoryPerBlockOptin: static + dynamic
  std::size_t smem_per_sm = 0;         // MaxSharedMemoryPerMultiprocessor
  std::size_t reserved_per_block = 0;  // ReservedSharedMemoryPerBlock: the SM's, per resident block
};

// How one kernel family is launched: dynamic shared memory = workspace_bytes + the table.
struct FamilySmem {
  std::uint32_t workspace_bytes = 0;  // the Atom's (0: every call on the register path)
  std::uint32_t stage_bytes = 0;      // its pipeline slots, atom::Config::stage_bytes_within
  int ctas_per_sm = 0;                // of this family's CTAs, how many one SM holds
};

struct KernelSmem {
  bool ok = false;
  const char* why = "";  // static text naming what does not fit, when !ok
  FamilySmem copy;       // CopyConfig kernels
  FamilySmem reduce;     // ReduceConfig kernels
  template <class C>
  const FamilySmem& of() const {
    return C::reduces ? reduce : copy;
  }
};

// One family on `d` for a communicator of `ranks`, with `static_smem` bytes the kernel declares
// statically. The workspace is what the per-block limit leaves after the table, in 128-byte
// steps, at most the configuration's; below one 256-byte slot per stage it is 0 (a header alone
// would only take shared memory from the SM). Volta and older run the register-path Atom
// (atom.cuh), which touches no workspace. ctas_per_sm 0: not even the table fits.
template <class Cfg>
constexpr FamilySmem family_smem(const DeviceLimits& d, int ranks, std::size_t static_smem) {
  const std::size_t fixed = static_smem + source_table_bytes(ranks);
  FamilySmem f;
  if (d.smem_per_block < fixed) return f;
  std::size_t workspace = 0;
  if (d.sm_major >= 8) {
    workspace = std::min(Cfg::workspace_bytes, (d.smem_per_block - fixed) & ~std::size_t{127});
    if (Cfg::stage_bytes_within(workspace) == 0) workspace = 0;
  }
  f.workspace_bytes = static_cast<std::uint32_t>(workspace);
  f.stage_bytes = Cfg::stage_bytes_within(workspace);
  f.ctas_per_sm = static_cast<int>(d.smem_per_sm / (workspace + fixed + d.reserved_per_block));
  return f;
}

// Both families on `d` for a communicator of `ranks` (1..kMaxRanks). Not ok when a CTA cannot
// fit at all (its table and static shared memory exceed the block or SM limit): no GPU Purlin
// targets comes near that, but a wrong limit must fail the communicator's creation with a reason,
// not a launch.
//
// The co-residency budget (policy/select.cc) counts one SNAC CTA per SM: ctas_per_sm >= 1 makes
// that safe on any GPU. Where a small workspace lets two share an SM (PURLIN_SMEM_LIMIT_BYTES on
// an H100) the count is only conservative; at the compiled sizes on sm_80 / sm_90 / sm_100 and
// on 99 KiB GPUs, one CTA fills an SM's shared memory as when the policy table was measured.
constexpr KernelSmem select_smem(const DeviceLimits& d, int ranks, std::size_t static_smem = 0) {
  KernelSmem k;
  if (ranks < 1 || ranks > kMaxRanks) {
    k.why = "communicator size outside 1..kMaxRanks";
    return k;
  }
  k.copy = family_smem<CopyConfig>(d, ranks, static_smem);
  k.reduce = family_smem<ReduceConfig>(d, ranks, static_smem);
  if (k.copy.ctas_per_sm < 1 || k.reduce.ctas_per_sm < 1) {
    k.why = "shared memory per block or per SM cannot hold a kernel's source table";
    return k;
  }
  k.ok = true;
  return k;
}

}  // namespace purlin::launch
