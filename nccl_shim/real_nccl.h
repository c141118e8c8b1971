// The real NCCL that forwarded calls run on, found and loaded with dlopen.
//
// Purlin is itself libnccl.so.2, usually LD_PRELOADed, so dlopen("libnccl.so.2") would
// hand back Purlin. The loader therefore opens candidates by absolute path only and
// rejects any Purlin build. Search order, first acceptable candidate wins:
//   1. PURLIN_NCCL_LIBRARY=<file>: authoritative; when it cannot be used nothing else is
//      tried, so an explicit choice never silently becomes another library;
//   2. a libnccl.so* the process has already loaded that is not Purlin;
//   3. <dir>/libnccl.so.2 for the Python nvidia-nccl wheel next to any loaded object under
//      site-/dist-packages (the NCCL a framework such as PyTorch ships with), then the
//      directories of LD_LIBRARY_PATH, the toolkit named by CUDA_HOME / CUDA_PATH, the
//      loader's standard directories, and /usr/local/cuda.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>

#include "nccl_api.h"

namespace purlin::shim {

// One typed pointer per NCCL 2.28 entry point, named after the function without its
// prefix, bound to the library's `pnccl` symbol (its `nccl` symbol when a build lacks
// profiling aliases), so calls reach the real implementation even if a profiler
// interposes the `nccl` names.
//
// The entry points every NCCL since 2.19 has are required: a library lacking one is not
// used. The rest (marked "may be null") appeared later and stay null when the loaded
// library predates them; callers must check before calling.
struct RealNccl {
  std::string path;  // absolute path it was loaded from
  int version = 0;   // from its ncclGetVersion, e.g. 22809
  void* handle = nullptr;  // dlopen handle; never closed (RTLD_NODELETE)

  // Version, ids, errors.
  decltype(&pncclGetVersion) GetVersion = nullptr;
  decltype(&pncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&pncclGetErrorString) GetErrorString = nullptr;
  decltype(&pncclGetLastError) GetLastError = nullptr;
  // pncclResetDebugInit is declared deprecated in nccl.h; naming it would warn.
  void (*ResetDebugInit)() = nullptr;  // may be null

  // Communicator lifetime.
  decltype(&pncclCommInitRank) CommInitRank = nullptr;
  decltype(&pncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&pncclCommInitRankScalable) CommInitRankScalable = nullptr;  // may be null
  decltype(&pncclCommInitAll) CommInitAll = nullptr;
  decltype(&pncclCommSplit) CommSplit = nullptr;
  decltype(&pncclCommShrink) CommShrink = nullptr;  // may be null
  decltype(&pncclCommFinalize) CommFinalize = nullptr;
  decltype(&pncclCommDestroy) CommDestroy = nullptr;
  decltype(&pncclCommAbort) CommAbort = nullptr;
  decltype(&pncclCommRevoke) CommRevoke = nullptr;  // may be null
  decltype(&pncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&pncclCommCount) CommCount = nullptr;
  decltype(&pncclCommCuDevice) CommCuDevice = nullptr;
  decltype(&pncclCommUserRank) CommUserRank = nullptr;

  // Memory and registration.
  decltype(&pncclMemAlloc) MemAlloc = nullptr;
  decltype(&pncclMemFree) MemFree = nullptr;
  decltype(&pncclCommRegister) CommRegister = nullptr;
  decltype(&pncclCommDeregister) CommDeregister = nullptr;
  decltype(&pncclCommWindowRegister) CommWindowRegister = nullptr;      // may be null
  decltype(&pncclCommWindowDeregister) CommWindowDeregister = nullptr;  // may be null

  // Reduction operators.
  decltype(&pncclRedOpCreatePreMulSum) RedOpCreatePreMulSum = nullptr;
  decltype(&pncclRedOpDestroy) RedOpDestroy = nullptr;

  // Collectives and point-to-point.
  decltype(&pncclAllReduce) AllReduce = nullptr;
  decltype(&pncclAllGather) AllGather = nullptr;
  decltype(&pncclReduceScatter) ReduceScatter = nullptr;
  decltype(&pncclAlltoAll) AlltoAll = nullptr;  // may be null
  decltype(&pncclBroadcast) Broadcast = nullptr;
  decltype(&pncclBcast) Bcast = nullptr;
  decltype(&pncclReduce) Reduce = nullptr;
  decltype(&pncclGather) Gather = nullptr;    // may be null
  decltype(&pncclScatter) Scatter = nullptr;  // may be null
  decltype(&pncclSend) Send = nullptr;
  decltype(&pncclRecv) Recv = nullptr;

  // Groups.
  decltype(&pncclGroupStart) GroupStart = nullptr;
  decltype(&pncclGroupEnd) GroupEnd = nullptr;
  decltype(&pncclGroupSimulateEnd) GroupSimulateEnd = nullptr;  // may be null

  // Device API, host side (NCCL 2.28); all may be null.
  decltype(&pncclDevCommCreate) DevCommCreate = nullptr;
  decltype(&pncclDevCommDestroy) DevCommDestroy = nullptr;
  decltype(&pncclTeamWorld) TeamWorld = nullptr;
  decltype(&pncclTeamLsa) TeamLsa = nullptr;
  decltype(&pncclTeamRail) TeamRail = nullptr;
  decltype(&pncclTeamRankToWorld) TeamRankToWorld = nullptr;
  decltype(&pncclTeamRankToLsa) TeamRankToLsa = nullptr;
  decltype(&pncclLsaBarrierCreateRequirement) LsaBarrierCreateRequirement = nullptr;
  decltype(&pncclGinBarrierCreateRequirement) GinBarrierCreateRequirement = nullptr;
  decltype(&pncclLLA2ACalcSlots) LLA2ACalcSlots = nullptr;
  decltype(&pncclLLA2ACreateRequirement) LLA2ACreateRequirement = nullptr;
};

// The NCCL entry points RealNccl binds (52, as NCCL 2.28 exports).
inline constexpr int kRealNcclEntryPoints = 52;

// Loaded once, thread-safe, on the first call; nullptr when no usable real NCCL exists,
// after one WARN line saying how to name one (PURLIN_NCCL_LIBRARY=/path/libnccl.so.2).
// Never throws, never exits.
const RealNccl* real_nccl() noexcept;

// Which library real_nccl() uses and how it was found, or where it looked and why each
// candidate was refused; for the per-communicator INFO line.
std::string real_nccl_describe();

// One uncached search with the current environment; real_nccl() keeps the result of the
// first. For tests. `describe` (optional) receives what real_nccl_describe() reports.
std::unique_ptr<RealNccl> search_real_nccl(std::string* describe) noexcept;

}  // namespace purlin::shim
