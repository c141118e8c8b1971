// The NCCL API as the shim and the fake NCCL see it: <nccl.h> and <nccl_device.h>, the
// check that they are the headers of the ABI Purlin exports, and what they do not declare
// for a Linux C++ program although libnccl.so.2 exports it.
//
// <nccl_device.h> declares the host half of the device API (ncclDevCommCreate,
// ncclCommQueryProperties, ncclTeam*, the window pointer queries, the barrier and LL
// all-to-all requirement builders), with C linkage, next to host/device inline overloads of
// the same names (ncclTeamWorld(ncclDevComm const&) ...); it compiles with g++ and gives the
// complete struct types. It does not declare their `pnccl` names (NCCL's profiling
// interface), so they are declared here with the exact C signatures, and checked against
// the header's `nccl` declarations below.
#pragma once

#include <nccl.h>
#include <nccl_device.h>

// The toolkit's include directory may carry an older nccl.h that a compiler could find
// first (cmake/FindNcclHeaders.cmake); Purlin exports, and reads the structures of, 2.32.3.
static_assert(NCCL_VERSION_CODE >= NCCL_VERSION(2, 32, 3),
              "compiled against NCCL headers older than 2.32.3: an older nccl.h shadows the one CMake found");

// nccl.h 2.32 declares these (deprecated, as unsupported) only under NCCL_OS_LINUX, which
// NCCL's own build defines and nothing defines for its users, who get empty function-like
// macros of the same names instead. libnccl.so.2 exports both, so the macros go.
#undef ncclResetDebugInit
#undef pncclResetDebugInit
extern "C" {
void ncclResetDebugInit();
void pncclResetDebugInit();
}

// Opaque here: NCCL 2.29+ exports the GIN scratch requirement builders but its Linux headers
// declare neither them nor their handle types (only the Windows stub does); Purlin only
// passes the pointers through.
struct ncclGinOutboxHandle;
struct ncclGinInboxA2AHandle;

extern "C" {
ncclResult_t pncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props);
ncclResult_t pncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                                ncclDevComm_t* outDevComm);
ncclResult_t pncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm);

ncclResult_t pncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t pncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                           void** outPtr);
ncclResult_t pncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void** outPtr);
ncclResult_t pncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);
ncclResult_t pncclGetMultimemDeviceLeInfo(ncclWindow_t window, size_t offset, ncclCftLeId* leId, size_t* leOffset);
ncclResult_t pncclGetCftDeviceLeInfo(ncclWindow_t window, size_t offset, int peerCft, ncclTeam_t cftTeam,
                                     ncclCftLeId* leId, size_t* leOffset);
ncclResult_t pncclGetPeerDeviceLeInfo(ncclWindow_t window, size_t offset, int peerWorld, ncclCftLeId* leId,
                                      size_t* leOffset);

ncclTeam_t pncclTeamWorld(ncclComm_t comm);
ncclTeam_t pncclTeamLsa(ncclComm_t comm);
ncclTeam_t pncclTeamRail(ncclComm_t comm);
ncclTeam_t pncclTeamCft(ncclComm_t comm, ncclCftTeamMode_t mode);
ncclTeam_t pncclTeamCftMultimem(ncclComm_t comm);
int pncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank);
int pncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank);

ncclResult_t pncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers,
                                              ncclLsaBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq);
ncclResult_t pncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                              ncclGinBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq);
int pncclLLA2ACalcSlots(int maxElts, int maxEltSize);
ncclResult_t pncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                         ncclDevResourceRequirements_t* outReq);
// As NCCL 2.32.3 defines them (src/nccl_device/gin_scratch.cc).
ncclResult_t ncclGinOutboxCreateRequirement(int nBlocks, int size_log2, ncclGinOutboxHandle* outHandle,
                                            ncclDevResourceRequirements_t* outReq);
ncclResult_t pncclGinOutboxCreateRequirement(int nBlocks, int size_log2, ncclGinOutboxHandle* outHandle,
                                             ncclDevResourceRequirements_t* outReq);
ncclResult_t ncclGinInboxA2ACreateRequirement(ncclTeam_t peers, int nBlocks, int size_log2,
                                              ncclGinInboxA2AHandle* outHandle, ncclDevResourceRequirements_t* outReq);
ncclResult_t pncclGinInboxA2ACreateRequirement(ncclTeam_t peers, int nBlocks, int size_log2,
                                               ncclGinInboxA2AHandle* outHandle, ncclDevResourceRequirements_t* outReq);
}  // extern "C"

namespace purlin::shim::detail {

// A static_cast between function pointer types compiles only when an overload of `nccl`
// has exactly the type of `pnccl`, so a drift between our declarations and the header's
// fails the build instead of corrupting a call.
template <class P>
constexpr bool same_c_signature(P, P) { return true; }

static_assert(same_c_signature(&pncclCommQueryProperties,
                               static_cast<decltype(&pncclCommQueryProperties)>(&ncclCommQueryProperties)));
static_assert(same_c_signature(&pncclDevCommCreate,
                               static_cast<decltype(&pncclDevCommCreate)>(&ncclDevCommCreate)));
static_assert(same_c_signature(&pncclDevCommDestroy,
                               static_cast<decltype(&pncclDevCommDestroy)>(&ncclDevCommDestroy)));
static_assert(same_c_signature(&pncclGetLsaMultimemDevicePointer,
                               static_cast<decltype(&pncclGetLsaMultimemDevicePointer)>(&ncclGetLsaMultimemDevicePointer)));
static_assert(same_c_signature(&pncclGetMultimemDevicePointer,
                               static_cast<decltype(&pncclGetMultimemDevicePointer)>(&ncclGetMultimemDevicePointer)));
static_assert(same_c_signature(&pncclGetLsaDevicePointer,
                               static_cast<decltype(&pncclGetLsaDevicePointer)>(&ncclGetLsaDevicePointer)));
static_assert(same_c_signature(&pncclGetPeerDevicePointer,
                               static_cast<decltype(&pncclGetPeerDevicePointer)>(&ncclGetPeerDevicePointer)));
static_assert(same_c_signature(&pncclGetMultimemDeviceLeInfo,
                               static_cast<decltype(&pncclGetMultimemDeviceLeInfo)>(&ncclGetMultimemDeviceLeInfo)));
static_assert(same_c_signature(&pncclGetCftDeviceLeInfo,
                               static_cast<decltype(&pncclGetCftDeviceLeInfo)>(&ncclGetCftDeviceLeInfo)));
static_assert(same_c_signature(&pncclGetPeerDeviceLeInfo,
                               static_cast<decltype(&pncclGetPeerDeviceLeInfo)>(&ncclGetPeerDeviceLeInfo)));
static_assert(same_c_signature(&pncclTeamWorld, static_cast<decltype(&pncclTeamWorld)>(&ncclTeamWorld)));
static_assert(same_c_signature(&pncclTeamLsa, static_cast<decltype(&pncclTeamLsa)>(&ncclTeamLsa)));
static_assert(same_c_signature(&pncclTeamRail, static_cast<decltype(&pncclTeamRail)>(&ncclTeamRail)));
static_assert(same_c_signature(&pncclTeamCft, static_cast<decltype(&pncclTeamCft)>(&ncclTeamCft)));
static_assert(same_c_signature(&pncclTeamCftMultimem,
                               static_cast<decltype(&pncclTeamCftMultimem)>(&ncclTeamCftMultimem)));
static_assert(same_c_signature(&pncclTeamRankToWorld,
                               static_cast<decltype(&pncclTeamRankToWorld)>(&ncclTeamRankToWorld)));
static_assert(same_c_signature(&pncclTeamRankToLsa,
                               static_cast<decltype(&pncclTeamRankToLsa)>(&ncclTeamRankToLsa)));
static_assert(same_c_signature(&pncclLsaBarrierCreateRequirement,
                               static_cast<decltype(&pncclLsaBarrierCreateRequirement)>(&ncclLsaBarrierCreateRequirement)));
static_assert(same_c_signature(&pncclGinBarrierCreateRequirement,
                               static_cast<decltype(&pncclGinBarrierCreateRequirement)>(&ncclGinBarrierCreateRequirement)));
static_assert(same_c_signature(&pncclLLA2ACalcSlots,
                               static_cast<decltype(&pncclLLA2ACalcSlots)>(&ncclLLA2ACalcSlots)));
static_assert(same_c_signature(&pncclLLA2ACreateRequirement,
                               static_cast<decltype(&pncclLLA2ACreateRequirement)>(&ncclLLA2ACreateRequirement)));

}  // namespace purlin::shim::detail
