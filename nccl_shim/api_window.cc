// Queries on memory windows (NCCL 2.29-2.31): the user pointer behind a window, and the
// device pointers and CFT LE handles of its peers' mappings.
//
// With a real NCCL loaded every window is the real one (api_memory.cc: ncclCommWindowRegister),
// so those queries go to it. Without one a window is Purlin's record of the range: Purlin
// knows its user pointer, and it has no peer mappings to report.
#include <nccl.h>

#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "nccl_api.h"
#include "registration.h"
#include "runtime/memory_registry.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

// A window query without a communicator: the window is the real NCCL's or it is no window
// that has device pointers.
template <class Entry, class... Args>
ncclResult_t query_window(const char* fn, Entry RealNcclEntries::*entry, ncclWindow_t window, Args... args) {
  return guarded(fn, [&] {
    const RealNccl* rn = real_nccl();
    if (rn == nullptr)
      return fail(ncclInvalidUsage, fn,
                  "window %p was registered without a real NCCL (%s): Purlin's windows have no device mappings",
                  static_cast<void*>(window), real_nccl_describe().c_str());
    return call_real(fn, rn->*entry, window, args...);
  });
}

}  // namespace

extern "C" {

ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  const char* fn = "ncclWinGetUserPtr";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->WinGetUserPtr, rc, win, outUserPtr);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "outUserPtr", outUserPtr); r != ncclSuccess) return r;
    auto range = comm->core->registry().find_key(win);
    if (!range || range->kind != purlin::runtime::RangeKind::kWindow)
      return fail(ncclInvalidArgument, fn, "win %p is not a window of this comm", static_cast<void*>(win));
    if (!range->external) {
      *outUserPtr = static_cast<const NativeWindow*>(range->key)->buff;
      return ncclSuccess;
    }
    return call_real(fn, real_nccl()->WinGetUserPtr, comm->real.load(std::memory_order_acquire), win, outUserPtr);
  });
}

ncclResult_t pncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr) {
  return query_window("ncclGetLsaMultimemDevicePointer", &RealNcclEntries::GetLsaMultimemDevicePointer, window,
                      offset, outPtr);
}

ncclResult_t pncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                           void** outPtr) {
  return query_window("ncclGetMultimemDevicePointer", &RealNcclEntries::GetMultimemDevicePointer, window, offset,
                      multimem, outPtr);
}

ncclResult_t pncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  return query_window("ncclGetLsaDevicePointer", &RealNcclEntries::GetLsaDevicePointer, window, offset, lsaRank,
                      outPtr);
}

ncclResult_t pncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  return query_window("ncclGetPeerDevicePointer", &RealNcclEntries::GetPeerDevicePointer, window, offset, peer,
                      outPtr);
}

ncclResult_t pncclGetMultimemDeviceLeInfo(ncclWindow_t window, size_t offset, ncclCftLeId* leId, size_t* leOffset) {
  return query_window("ncclGetMultimemDeviceLeInfo", &RealNcclEntries::GetMultimemDeviceLeInfo, window, offset, leId,
                      leOffset);
}

ncclResult_t pncclGetCftDeviceLeInfo(ncclWindow_t window, size_t offset, int peerCft, ncclTeam_t cftTeam,
                                     ncclCftLeId* leId, size_t* leOffset) {
  return query_window("ncclGetCftDeviceLeInfo", &RealNcclEntries::GetCftDeviceLeInfo, window, offset, peerCft,
                      cftTeam, leId, leOffset);
}

ncclResult_t pncclGetPeerDeviceLeInfo(ncclWindow_t window, size_t offset, int peerWorld, ncclCftLeId* leId,
                                      size_t* leOffset) {
  return query_window("ncclGetPeerDeviceLeInfo", &RealNcclEntries::GetPeerDeviceLeInfo, window, offset, peerWorld,
                      leId, leOffset);
}

ncclResult_t ncclWinGetUserPtr(ncclComm_t, ncclWindow_t, void**) PURLIN_WEAK_ALIAS_OF_P(ncclWinGetUserPtr);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t, size_t, void**)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetLsaMultimemDevicePointer);
ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t, size_t, ncclMultimemHandle_t, void**)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetMultimemDevicePointer);
ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t, size_t, int, void**) PURLIN_WEAK_ALIAS_OF_P(ncclGetLsaDevicePointer);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t, size_t, int, void**)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetPeerDevicePointer);
ncclResult_t ncclGetMultimemDeviceLeInfo(ncclWindow_t, size_t, ncclCftLeId*, size_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetMultimemDeviceLeInfo);
ncclResult_t ncclGetCftDeviceLeInfo(ncclWindow_t, size_t, int, ncclTeam_t, ncclCftLeId*, size_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetCftDeviceLeInfo);
ncclResult_t ncclGetPeerDeviceLeInfo(ncclWindow_t, size_t, int, ncclCftLeId*, size_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGetPeerDeviceLeInfo);

}  // extern "C"
