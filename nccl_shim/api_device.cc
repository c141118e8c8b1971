// Host functions of NCCL's device API (2.28-2.31). They describe the real NCCL's device-side
// communicator, so they are forwarded; ncclDevCommCreate is collective, which makes it
// a safe point to create the real communicator.
#include <nccl.h>

#include "comm.h"
#include "dev_comm_requirements.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "nccl_api.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

// The real communicator behind comm, created if needed; nullptr after a WARN otherwise.
ncclComm_t real_comm(const char* fn, ncclComm_t comm) {
  if (check_ready(fn, comm) != ncclSuccess) return nullptr;
  if (ensure_real_comm(fn, comm) != ncclSuccess) return nullptr;
  return comm->real.load(std::memory_order_acquire);
}

// Team queries return a value, not a status: a failure yields an empty team (0 ranks)
// after the WARN, which any use of it in device code treats as "no peers". They reach
// ensure_real_comm (a mutex, strings, the bootstrap), so they are guarded like the others.
template <class... Args>
ncclTeam_t team_of(const char* fn, ncclComm_t comm, ncclTeam_t (*RealNcclEntries::*entry)(ncclComm_t, Args...),
                   Args... args) {
  constexpr ncclTeam_t kNoTeam{};
  return guarded_value(fn, kNoTeam, [&] {
    ncclComm_t rc = real_comm(fn, comm);
    if (rc == nullptr) return kNoTeam;
    auto f = real_nccl()->*entry;
    if (f == nullptr) {
      missing_entry(fn);
      return kNoTeam;
    }
    return f(rc, args...);
  });
}

// Rank translations: -1 after the WARN on failure, which is no rank.
int team_rank(const char* fn, ncclComm_t comm, ncclTeam_t team, int rank,
              int (*RealNcclEntries::*entry)(ncclComm_t, ncclTeam_t, int)) {
  return guarded_value(fn, -1, [&] {
    ncclComm_t rc = real_comm(fn, comm);
    if (rc == nullptr) return -1;
    auto f = real_nccl()->*entry;
    if (f == nullptr) {
      missing_entry(fn);
      return -1;
    }
    return f(rc, team, rank);
  });
}

}  // namespace

extern "C" {

ncclResult_t pncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs, ncclDevComm_t* outDevComm) {
  const char* fn = "ncclDevCommCreate";
  return guarded(fn, [&] {
    if (reqs == nullptr) return fail(ncclInvalidArgument, fn, "reqs is NULL");
    if (outDevComm == nullptr) return fail(ncclInvalidArgument, fn, "outDevComm is NULL");
    ncclComm_t rc = real_comm(fn, comm);
    if (rc == nullptr) return comm != nullptr && live_contains(comm) ? ncclSystemError : ncclInvalidArgument;
    // The caller's struct may be of either layout, and so may the real NCCL's (dev_comm_requirements.h).
    RealRequirements forwarded;
    if (ncclResult_t r = forwarded.build(fn, reqs, real_nccl()->version); r != ncclSuccess) return r;
    return call_real(fn, real_nccl()->DevCommCreate, rc, forwarded.get(), outDevComm);
  });
}

ncclResult_t pncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  const char* fn = "ncclDevCommDestroy";
  return guarded(fn, [&] {
    if (devComm == nullptr) return fail(ncclInvalidArgument, fn, "devComm is NULL");
    ncclComm_t rc = real_comm(fn, comm);
    if (rc == nullptr) return comm != nullptr && live_contains(comm) ? ncclSystemError : ncclInvalidArgument;
    return call_real(fn, real_nccl()->DevCommDestroy, rc, devComm);
  });
}

ncclTeam_t pncclTeamWorld(ncclComm_t comm) { return team_of("ncclTeamWorld", comm, &RealNccl::TeamWorld); }
ncclTeam_t pncclTeamLsa(ncclComm_t comm) { return team_of("ncclTeamLsa", comm, &RealNccl::TeamLsa); }
ncclTeam_t pncclTeamRail(ncclComm_t comm) { return team_of("ncclTeamRail", comm, &RealNccl::TeamRail); }
ncclTeam_t pncclTeamCft(ncclComm_t comm, ncclCftTeamMode_t mode) {
  return team_of("ncclTeamCft", comm, &RealNccl::TeamCft, mode);
}
ncclTeam_t pncclTeamCftMultimem(ncclComm_t comm) {
  return team_of("ncclTeamCftMultimem", comm, &RealNccl::TeamCftMultimem);
}

int pncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  return team_rank("ncclTeamRankToWorld", comm, team, rank, &RealNccl::TeamRankToWorld);
}

int pncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  return team_rank("ncclTeamRankToLsa", comm, team, rank, &RealNccl::TeamRankToLsa);
}

ncclResult_t pncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclLsaBarrierCreateRequirement";
  return guarded(fn, [&] {
    return forward_global(fn, &RealNcclEntries::LsaBarrierCreateRequirement, team, nBarriers, outHandle, outReq);
  });
}

ncclResult_t pncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                              ncclGinBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclGinBarrierCreateRequirement";
  return guarded(fn, [&] {
    ncclComm_t rc = real_comm(fn, comm);
    if (rc == nullptr) return comm != nullptr && live_contains(comm) ? ncclSystemError : ncclInvalidArgument;
    return call_real(fn, real_nccl()->GinBarrierCreateRequirement, rc, team, nBarriers, outHandle, outReq);
  });
}

// 0 slots after the WARN on failure.
int pncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  const char* fn = "ncclLLA2ACalcSlots";
  return guarded_value(fn, 0, [&] {
    const RealNccl* rn = nullptr;
    if (require_real(fn, &rn) != ncclSuccess) return 0;
    if (rn->LLA2ACalcSlots == nullptr) {
      missing_entry(fn);
      return 0;
    }
    return rn->LLA2ACalcSlots(maxElts, maxEltSize);
  });
}

ncclResult_t pncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                         ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclLLA2ACreateRequirement";
  return guarded(fn, [&] {
    return forward_global(fn, &RealNcclEntries::LLA2ACreateRequirement, nBlocks, nSlots, outHandle, outReq);
  });
}

ncclResult_t pncclGinOutboxCreateRequirement(int nBlocks, int size_log2, ncclGinOutboxHandle* outHandle,
                                             ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclGinOutboxCreateRequirement";
  return guarded(fn, [&] {
    return forward_global(fn, &RealNcclEntries::GinOutboxCreateRequirement, nBlocks, size_log2, outHandle, outReq);
  });
}

ncclResult_t pncclGinInboxA2ACreateRequirement(ncclTeam_t peers, int nBlocks, int size_log2,
                                               ncclGinInboxA2AHandle* outHandle,
                                               ncclDevResourceRequirements_t* outReq) {
  const char* fn = "ncclGinInboxA2ACreateRequirement";
  return guarded(fn, [&] {
    return forward_global(fn, &RealNcclEntries::GinInboxA2ACreateRequirement,
                          peers, nBlocks, size_log2, outHandle, outReq);
  });
}

ncclResult_t ncclDevCommCreate(ncclComm_t, ncclDevCommRequirements_t const*, ncclDevComm_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclDevCommCreate);
ncclResult_t ncclDevCommDestroy(ncclComm_t, ncclDevComm_t const*) PURLIN_WEAK_ALIAS_OF_P(ncclDevCommDestroy);
ncclTeam_t ncclTeamWorld(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclTeamWorld);
ncclTeam_t ncclTeamLsa(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclTeamLsa);
ncclTeam_t ncclTeamRail(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclTeamRail);
ncclTeam_t ncclTeamCft(ncclComm_t, ncclCftTeamMode_t) PURLIN_WEAK_ALIAS_OF_P(ncclTeamCft);
ncclTeam_t ncclTeamCftMultimem(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclTeamCftMultimem);
int ncclTeamRankToWorld(ncclComm_t, ncclTeam_t, int) PURLIN_WEAK_ALIAS_OF_P(ncclTeamRankToWorld);
int ncclTeamRankToLsa(ncclComm_t, ncclTeam_t, int) PURLIN_WEAK_ALIAS_OF_P(ncclTeamRankToLsa);
ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle_t*, ncclDevResourceRequirements_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclLsaBarrierCreateRequirement);
ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle_t*,
                                             ncclDevResourceRequirements_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGinBarrierCreateRequirement);
int ncclLLA2ACalcSlots(int, int) PURLIN_WEAK_ALIAS_OF_P(ncclLLA2ACalcSlots);
ncclResult_t ncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle_t*, ncclDevResourceRequirements_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclLLA2ACreateRequirement);
ncclResult_t ncclGinOutboxCreateRequirement(int, int, ncclGinOutboxHandle*, ncclDevResourceRequirements_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGinOutboxCreateRequirement);
ncclResult_t ncclGinInboxA2ACreateRequirement(ncclTeam_t, int, int, ncclGinInboxA2AHandle*,
                                              ncclDevResourceRequirements_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclGinInboxA2ACreateRequirement);

}  // extern "C"
