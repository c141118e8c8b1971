// The fake's version, id, error, communicator, memory and registration entry points.
// Each logs its arguments (and the values behind input pointers), then, unless its
// configured result is an error, produces plausible outputs.
#include <nccl.h>

#include <cstring>

#include "fake_nccl.h"
#include "nccl_api.h"  // ncclResetDebugInit as a function
#include "recorder.h"

using fake_nccl::Call;

namespace {

ncclComm_t* out_comm_or_null(ncclComm_t* out) {
  if (out != nullptr) *out = nullptr;
  return out;
}

// FAKE_NCCL_ONLY_228: the build without the newer entry points (CMakeLists.txt).
#ifdef FAKE_NCCL_ONLY_228
constexpr int kVersion = FAKE_NCCL_228_VERSION;
#else
constexpr int kVersion = FAKE_NCCL_VERSION;
#endif

}  // namespace

extern "C" {

ncclResult_t pncclGetVersion(int* version) {
  Call c("GetVersion");
  c.ptr("version", version);
  if (c.ok() && version != nullptr) *version = kVersion;
  return c.commit();
}

ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) {
  Call c("GetUniqueId");
  c.ptr("uniqueId", uniqueId);
  if (c.ok() && uniqueId != nullptr) {
    std::memset(uniqueId->internal, 0, sizeof(uniqueId->internal));
    uintptr_t token = fake_nccl::next_token();
    std::memcpy(uniqueId->internal, "fake-nccl-id", 12);
    std::memcpy(uniqueId->internal + 16, &token, sizeof(token));
    c.id("out", *uniqueId);
  }
  return c.commit();
}

const char* pncclGetErrorString(ncclResult_t result) {
  Call("GetErrorString").num("result_arg", result).commit();
  return "fake-nccl error string";
}

const char* pncclGetLastError(ncclComm_t comm) {
  Call c("GetLastError");
  c.ptr("comm", comm).commit();
  return "fake-nccl last error";
}

void pncclResetDebugInit() { Call("ResetDebugInit").commit(); }

ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  Call c("CommInitRank");
  c.ptr("comm", out_comm_or_null(comm)).num("nranks", nranks).id("commId", commId).num("rank", rank);
  if (c.ok() && comm != nullptr) c.ptr("out", *comm = fake_nccl::new_comm(nranks, rank, rank));
  return c.commit();
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config) {
  Call c("CommInitRankConfig");
  c.ptr("comm", out_comm_or_null(comm)).num("nranks", nranks).id("commId", commId).num("rank", rank);
  c.config("config", config);
  if (c.ok() && comm != nullptr) c.ptr("out", *comm = fake_nccl::new_comm(nranks, rank, rank));
  return c.commit();
}

ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config) {
  Call c("CommInitRankScalable");
  c.ptr("newcomm", out_comm_or_null(newcomm)).num("nranks", nranks).num("myrank", myrank);
  c.num("nId", nId).ptr("commIds", commIds);
  for (int i = 0; commIds != nullptr && i < nId; ++i) {
    c.id(("commIds[" + std::to_string(i) + "]").c_str(), commIds[i]);
  }
  c.config("config", config);
  if (c.ok() && newcomm != nullptr) c.ptr("out", *newcomm = fake_nccl::new_comm(nranks, myrank, myrank));
  return c.commit();
}

ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  Call c("CommInitAll");
  c.ptr("comm", comm).num("ndev", ndev).ptr("devlist", devlist);
  for (int i = 0; devlist != nullptr && i < ndev; ++i) {
    c.num(("devlist[" + std::to_string(i) + "]").c_str(), devlist[i]);
  }
  for (int i = 0; c.ok() && comm != nullptr && i < ndev; ++i) {
    comm[i] = fake_nccl::new_comm(ndev, i, devlist != nullptr ? devlist[i] : i);
    c.ptr(("out[" + std::to_string(i) + "]").c_str(), comm[i]);
  }
  return c.commit();
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config) {
  Call c("CommSplit");
  c.comm("comm", comm).num("color", color).num("key", key).ptr("newcomm", out_comm_or_null(newcomm));
  c.config("config", config);
  if (c.ok() && newcomm != nullptr && color != NCCL_SPLIT_NOCOLOR) {
    c.ptr("out", *newcomm = fake_nccl::new_comm(1, 0, comm->device));
  }
  return c.commit();
}

ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  Call c("CommShrink");
  c.comm("comm", comm).ptr("excludeRanksList", excludeRanksList).num("excludeRanksCount", excludeRanksCount);
  for (int i = 0; excludeRanksList != nullptr && i < excludeRanksCount; ++i) {
    c.num(("excludeRanksList[" + std::to_string(i) + "]").c_str(), excludeRanksList[i]);
  }
  c.ptr("newcomm", out_comm_or_null(newcomm)).config("config", config).num("shrinkFlags", shrinkFlags);
  if (c.ok() && newcomm != nullptr) {
    c.ptr("out", *newcomm = fake_nccl::new_comm(comm->nranks - excludeRanksCount, 0, comm->device));
  }
  return c.commit();
}

ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  Call c("CommFinalize");
  return c.comm("comm", comm).commit();
}

ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  Call c("CommDestroy");
  c.comm("comm", comm);
  if (c.ok()) fake_nccl::delete_comm(comm);
  return c.commit();
}

ncclResult_t pncclCommAbort(ncclComm_t comm) {
  Call c("CommAbort");
  c.comm("comm", comm);
  if (c.ok()) fake_nccl::delete_comm(comm);
  return c.commit();
}

ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  Call c("CommRevoke");
  return c.comm("comm", comm).num("revokeFlags", revokeFlags).commit();
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  Call c("CommGetAsyncError");
  c.comm("comm", comm).ptr("asyncError", asyncError);
  if (c.ok() && asyncError != nullptr) *asyncError = ncclSuccess;
  return c.commit();
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  Call c("CommCount");
  c.comm("comm", comm).ptr("count", count);
  if (c.ok() && count != nullptr) *count = comm->nranks;
  return c.commit();
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  Call c("CommCuDevice");
  c.comm("comm", comm).ptr("device", device);
  if (c.ok() && device != nullptr) *device = comm->device;
  return c.commit();
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  Call c("CommUserRank");
  c.comm("comm", comm).ptr("rank", rank);
  if (c.ok() && rank != nullptr) *rank = comm->rank;
  return c.commit();
}

ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  Call c("MemAlloc");
  c.ptr("ptr", ptr).num("size", static_cast<long long>(size));
  if (c.ok() && ptr != nullptr) c.ptr("out", *ptr = fake_nccl::new_allocation(size));
  return c.commit();
}

ncclResult_t pncclMemFree(void* ptr) {
  Call c("MemFree");
  c.ptr("ptr", ptr);
  bool known = c.ok() && fake_nccl::delete_allocation(ptr);
  c.num("ptr_known", known ? 1 : 0);
  return c.commit();
}

ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  Call c("CommRegister");
  c.comm("comm", comm).ptr("buff", buff).num("size", static_cast<long long>(size)).ptr("handle", handle);
  if (c.ok() && handle != nullptr) c.ptr("out", *handle = reinterpret_cast<void*>(fake_nccl::next_token()));
  return c.commit();
}

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) {
  Call c("CommDeregister");
  return c.comm("comm", comm).ptr("handle", handle).commit();
}

ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags) {
  Call c("CommWindowRegister");
  c.comm("comm", comm).ptr("buff", buff).num("size", static_cast<long long>(size)).ptr("win", win);
  c.num("winFlags", winFlags);
  if (c.ok() && win != nullptr) {
    c.ptr("out", *win = reinterpret_cast<ncclWindow_t>(fake_nccl::next_token()));
  }
  return c.commit();
}

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  Call c("CommWindowDeregister");
  return c.comm("comm", comm).ptr("win", win).commit();
}

}  // extern "C"
