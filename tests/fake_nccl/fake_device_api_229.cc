// The fake's device-API host functions of NCCL 2.29-2.31 (left out of libfake_nccl_228.so):
// communicator properties, window pointer queries, CFT teams and GIN requirements. Outputs
// carry distinctive values, so a test can tell that they came from here.
#include "device_log.h"

using fake_nccl::Call;
using fake_nccl::fill_requirement;
using fake_nccl::log_team;

namespace {

// window + offset + 0x1000 * which, never dereferenced.
ncclResult_t device_pointer(Call& c, ncclWindow_t window, size_t offset, void** outPtr, uintptr_t which) {
  c.ptr("window", window).num("offset", static_cast<long long>(offset)).ptr("outPtr", outPtr);
  if (c.ok() && outPtr != nullptr)
    c.ptr("out", *outPtr = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(window) + offset + 0x1000 * which));
  return c.commit();
}

ncclResult_t le_info(Call& c, ncclCftLeId* leId, size_t* leOffset, ncclCftLeId id) {
  c.ptr("leId", leId).ptr("leOffset", leOffset);
  if (c.ok() && leId != nullptr && leOffset != nullptr) {
    *leId = id;
    *leOffset = 4096 + id;
  }
  return c.commit();
}

}  // namespace

extern "C" {

ncclResult_t pncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props) {
  Call c("CommQueryProperties");
  c.comm("comm", comm).ptr("props", props);
  if (props != nullptr) {
    c.num("props.size", static_cast<long long>(props->size)).num("props.magic", props->magic);
    c.num("props.version", props->version);
  }
  if (c.ok() && props != nullptr) {
    props->rank = comm->rank;
    props->nRanks = comm->nranks;
    props->cudaDev = comm->device;
    props->nvmlDev = 77;
    props->deviceApiSupport = true;
    props->commHash = 0xfa4e;
  }
  return c.commit();
}

ncclResult_t pncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr) {
  Call c("GetLsaMultimemDevicePointer");
  return device_pointer(c, window, offset, outPtr, 1);
}

ncclResult_t pncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset, ncclMultimemHandle_t multimem,
                                           void** outPtr) {
  Call c("GetMultimemDevicePointer");
  c.ptr("multimem.mcBasePtr", multimem.mcBasePtr);
  return device_pointer(c, window, offset, outPtr, 2);
}

ncclResult_t pncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank, void** outPtr) {
  Call c("GetLsaDevicePointer");
  c.num("lsaRank", lsaRank);
  return device_pointer(c, window, offset, outPtr, 3);
}

ncclResult_t pncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  Call c("GetPeerDevicePointer");
  c.num("peer", peer);
  return device_pointer(c, window, offset, outPtr, 4);
}

ncclResult_t pncclGetMultimemDeviceLeInfo(ncclWindow_t window, size_t offset, ncclCftLeId* leId, size_t* leOffset) {
  Call c("GetMultimemDeviceLeInfo");
  c.ptr("window", window).num("offset", static_cast<long long>(offset));
  return le_info(c, leId, leOffset, 51);
}

ncclResult_t pncclGetCftDeviceLeInfo(ncclWindow_t window, size_t offset, int peerCft, ncclTeam_t cftTeam,
                                     ncclCftLeId* leId, size_t* leOffset) {
  Call c("GetCftDeviceLeInfo");
  c.ptr("window", window).num("offset", static_cast<long long>(offset)).num("peerCft", peerCft);
  log_team(c, "cftTeam", cftTeam);
  return le_info(c, leId, leOffset, 52);
}

ncclResult_t pncclGetPeerDeviceLeInfo(ncclWindow_t window, size_t offset, int peerWorld, ncclCftLeId* leId,
                                      size_t* leOffset) {
  Call c("GetPeerDeviceLeInfo");
  c.ptr("window", window).num("offset", static_cast<long long>(offset)).num("peerWorld", peerWorld);
  return le_info(c, leId, leOffset, 53);
}

ncclTeam_t pncclTeamCft(ncclComm_t comm, ncclCftTeamMode_t mode) {
  Call c("TeamCft");
  c.comm("comm", comm).num("mode", mode).commit();
  return c.ok() ? ncclTeam_t{comm->nranks, comm->rank, 3} : ncclTeam_t{0, 0, 0};
}

ncclTeam_t pncclTeamCftMultimem(ncclComm_t comm) {
  Call c("TeamCftMultimem");
  c.comm("comm", comm).commit();
  return c.ok() ? ncclTeam_t{comm->nranks, comm->rank, 4} : ncclTeam_t{0, 0, 0};
}

// The handles are opaque to Purlin (nccl_api.h), so the fake leaves them alone.
ncclResult_t pncclGinOutboxCreateRequirement(int nBlocks, int size_log2, ncclGinOutboxHandle* outHandle,
                                             ncclDevResourceRequirements_t* outReq) {
  Call c("GinOutboxCreateRequirement");
  c.num("nBlocks", nBlocks).num("size_log2", size_log2).ptr("outHandle", outHandle).ptr("outReq", outReq);
  if (c.ok() && outReq != nullptr) fill_requirement(outReq, 444 * static_cast<size_t>(nBlocks) << size_log2, 0);
  return c.commit();
}

ncclResult_t pncclGinInboxA2ACreateRequirement(ncclTeam_t peers, int nBlocks, int size_log2,
                                               ncclGinInboxA2AHandle* outHandle, ncclDevResourceRequirements_t* outReq) {
  Call c("GinInboxA2ACreateRequirement");
  log_team(c, "peers", peers);
  c.num("nBlocks", nBlocks).num("size_log2", size_log2).ptr("outHandle", outHandle).ptr("outReq", outReq);
  if (c.ok() && outReq != nullptr) fill_requirement(outReq, 555 * static_cast<size_t>(nBlocks) << size_log2, nBlocks);
  return c.commit();
}

}  // extern "C"
