// The fake's device-API host functions of NCCL 2.28. Outputs follow the documented meaning
// loosely and carry distinctive values, so a test can tell that they came from here.
#include <cstring>
#include <string>

#include "device_log.h"

using fake_nccl::Call;
using fake_nccl::fill_requirement;
using fake_nccl::log_team;

extern "C" {

ncclResult_t pncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                                ncclDevComm_t* outDevComm) {
  Call c("DevCommCreate");
  c.comm("comm", comm).ptr("reqs", reqs);
  if (reqs != nullptr) {
    c.ptr("reqs.resourceRequirementsList", reqs->resourceRequirementsList);
    c.ptr("reqs.teamRequirementsList", reqs->teamRequirementsList);
    c.num("reqs.lsaMultimem", reqs->lsaMultimem).num("reqs.barrierCount", reqs->barrierCount);
    c.num("reqs.lsaBarrierCount", reqs->lsaBarrierCount).num("reqs.railGinBarrierCount", reqs->railGinBarrierCount);
    c.num("reqs.lsaLLA2ABlockCount", reqs->lsaLLA2ABlockCount).num("reqs.lsaLLA2ASlotCount", reqs->lsaLLA2ASlotCount);
    c.num("reqs.ginForceEnable", reqs->ginForceEnable).num("reqs.ginContextCount", reqs->ginContextCount);
    c.num("reqs.ginSignalCount", reqs->ginSignalCount).num("reqs.ginCounterCount", reqs->ginCounterCount);
  }
  c.ptr("outDevComm", outDevComm);
  if (c.ok() && outDevComm != nullptr) {
    std::memset(outDevComm, 0, sizeof(*outDevComm));
    outDevComm->rank = comm->rank;
    outDevComm->nRanks = comm->nranks;
    outDevComm->lsaRank = comm->rank;
    outDevComm->lsaSize = comm->nranks;
    outDevComm->ginSignalCount = reqs != nullptr ? reqs->ginSignalCount : 0;
    outDevComm->ginCounterCount = reqs != nullptr ? reqs->ginCounterCount : 0;
    outDevComm->lsaBarrier.nBarriers = 1000 + (reqs != nullptr ? reqs->lsaBarrierCount : 0);
  }
  return c.commit();
}

ncclResult_t pncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  Call c("DevCommDestroy");
  c.comm("comm", comm).ptr("devComm", devComm);
  if (devComm != nullptr) c.num("devComm.lsaBarrier.nBarriers", devComm->lsaBarrier.nBarriers);
  return c.commit();
}

ncclTeam_t pncclTeamWorld(ncclComm_t comm) {
  Call c("TeamWorld");
  c.comm("comm", comm).commit();
  return c.ok() ? ncclTeam_t{comm->nranks, comm->rank, 1} : ncclTeam_t{0, 0, 0};
}

ncclTeam_t pncclTeamLsa(ncclComm_t comm) {
  Call c("TeamLsa");
  c.comm("comm", comm).commit();
  return c.ok() ? ncclTeam_t{comm->nranks, comm->rank, 1} : ncclTeam_t{0, 0, 0};
}

ncclTeam_t pncclTeamRail(ncclComm_t comm) {
  Call c("TeamRail");
  c.comm("comm", comm).commit();
  return c.ok() ? ncclTeam_t{1, 0, comm->nranks} : ncclTeam_t{0, 0, 0};
}

// The fake's rank arithmetic is deliberately not NCCL's: 1000 + 100*team.rank + rank for
// world, 2000 + ... for lsa, so that a forwarded result is recognizable.
int pncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t t, int rank) {
  Call c("TeamRankToWorld");
  c.comm("comm", comm);
  log_team(c, "team", t);
  c.num("rank", rank).commit();
  return 1000 + 100 * t.rank + rank;
}

int pncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t t, int rank) {
  Call c("TeamRankToLsa");
  c.comm("comm", comm);
  log_team(c, "team", t);
  c.num("rank", rank).commit();
  return 2000 + 100 * t.rank + rank;
}

ncclResult_t pncclLsaBarrierCreateRequirement(ncclTeam_t t, int nBarriers, ncclLsaBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  Call c("LsaBarrierCreateRequirement");
  log_team(c, "team", t);
  c.num("nBarriers", nBarriers).ptr("outHandle", outHandle).ptr("outReq", outReq);
  if (c.ok() && outHandle != nullptr && outReq != nullptr) {
    fill_requirement(outReq, 111 * static_cast<size_t>(nBarriers), 0);
    *outHandle = ncclLsaBarrierHandle_t{0x11, nBarriers};
  }
  return c.commit();
}

ncclResult_t pncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t t, int nBarriers,
                                              ncclGinBarrierHandle_t* outHandle,
                                              ncclDevResourceRequirements_t* outReq) {
  Call c("GinBarrierCreateRequirement");
  c.comm("comm", comm);
  log_team(c, "team", t);
  c.num("nBarriers", nBarriers).ptr("outHandle", outHandle).ptr("outReq", outReq);
  if (c.ok() && outHandle != nullptr && outReq != nullptr) {
    fill_requirement(outReq, 222 * static_cast<size_t>(nBarriers), nBarriers);
    *outHandle = ncclGinBarrierHandle_t{7, 0x22};
  }
  return c.commit();
}

int pncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  Call("LLA2ACalcSlots").num("maxElts", maxElts).num("maxEltSize", maxEltSize).commit();
  return 3 * maxElts + maxEltSize;  // distinctive, not NCCL's formula
}

ncclResult_t pncclLLA2ACreateRequirement(int nBlocks, int nSlots, ncclLLA2AHandle_t* outHandle,
                                         ncclDevResourceRequirements_t* outReq) {
  Call c("LLA2ACreateRequirement");
  c.num("nBlocks", nBlocks).num("nSlots", nSlots).ptr("outHandle", outHandle).ptr("outReq", outReq);
  if (c.ok() && outHandle != nullptr && outReq != nullptr) {
    fill_requirement(outReq, 333 * static_cast<size_t>(nBlocks) * static_cast<size_t>(nSlots), 0);
    *outHandle = ncclLLA2AHandle_t{0x33, static_cast<uint32_t>(nSlots)};
  }
  return c.commit();
}

}  // extern "C"
