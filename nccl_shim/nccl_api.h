// The NCCL API as the shim and the fake NCCL see it: <nccl.h> and <nccl_device.h>, the
// check that they are the headers of the ABI Purlin exports, and what they do not declare
// for a Linux C++ program although libnccl.so.2 exports it.
//
// <nccl_device.h> declares the host half of the device API (ncclDevCommCreate, ncclTeam*,
// the barrier and LL all-to-all requirement builders), made usable from host C++.
//
// <nccl_device.h> declares these functions, with C linkage, next to host/device inline
// overloads of the same names (ncclTeamWorld(ncclDevComm const&) ...); it compiles with
// g++ and gives the complete struct types. It does not declare the `pnccl` names, which
// libnccl.so.2 exports too (NCCL's profiling interface), so they are declared here with
// the exact C signatures, and checked against the header's `nccl` declarations below.
#pragma once

#include <nccl.h>
#include <nccl_device.h>

// The toolkit's include directory may carry an older nccl.h that a compiler could find
// first (cmake/FindNcclHeaders.cmake); Purlin is built against, and reads the structures
// of, 2.32.3.
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

extern "C" {
ncclResult_t pncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                                ncclDevComm_t* outDevComm);
ncclResult_t pncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm);
ncclTeam_t pncclTeamWorld(ncclComm_t comm);
ncclTeam_t pncclTeamLsa(ncclComm_t comm);
ncclTeam_t pncclTeamRail(ncclComm_t comm);
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
}  // extern "C"

namespace purlin::shim::detail {

// A static_cast between function pointer types compiles only when an overload of `nccl`
// has exactly the type of `pnccl`, so a drift between our declarations and the header's
// fails the build instead of corrupting a call.
template <class P>
constexpr bool same_c_signature(P, P) { return true; }

static_assert(same_c_signature(&pncclDevCommCreate, static_cast<decltype(&pncclDevCommCreate)>(&ncclDevCommCreate)));
static_assert(same_c_signature(&pncclDevCommDestroy, static_cast<decltype(&pncclDevCommDestroy)>(&ncclDevCommDestroy)));
static_assert(same_c_signature(&pncclTeamWorld, static_cast<decltype(&pncclTeamWorld)>(&ncclTeamWorld)));
static_assert(same_c_signature(&pncclTeamLsa, static_cast<decltype(&pncclTeamLsa)>(&ncclTeamLsa)));
static_assert(same_c_signature(&pncclTeamRail, static_cast<decltype(&pncclTeamRail)>(&ncclTeamRail)));
static_assert(same_c_signature(&pncclTeamRankToWorld, static_cast<decltype(&pncclTeamRankToWorld)>(&ncclTeamRankToWorld)));
static_assert(same_c_signature(&pncclTeamRankToLsa, static_cast<decltype(&pncclTeamRankToLsa)>(&ncclTeamRankToLsa)));
static_assert(same_c_signature(&pncclLsaBarrierCreateRequirement,
                               static_cast<decltype(&pncclLsaBarrierCreateRequirement)>(&ncclLsaBarrierCreateRequirement)));
static_assert(same_c_signature(&pncclGinBarrierCreateRequirement,
                               static_cast<decltype(&pncclGinBarrierCreateRequirement)>(&ncclGinBarrierCreateRequirement)));
static_assert(same_c_signature(&pncclLLA2ACalcSlots, static_cast<decltype(&pncclLLA2ACalcSlots)>(&ncclLLA2ACalcSlots)));
static_assert(same_c_signature(&pncclLLA2ACreateRequirement,
                               static_cast<decltype(&pncclLLA2ACreateRequirement)>(&ncclLLA2ACreateRequirement)));

}  // namespace purlin::shim::detail
