// The fake's communicator, memory, parameter and encryption entry points of NCCL 2.29-2.32
// (left out of libfake_nccl_228.so). Outputs are distinctive values, so a test can tell
// that they came from here.
#include <nccl.h>

#include <algorithm>
#include <cstring>

#include "recorder.h"

using fake_nccl::Call;

namespace {

ncclParamHandle_t token_handle() { return reinterpret_cast<ncclParamHandle_t>(fake_nccl::next_token()); }

// Each integer getter returns its width, negative for the signed ones: ParamGetI16 -> -16.
template <class T>
ncclResult_t param_get(const char* name, ncclParamHandle_t h, T* out, long long value) {
  Call c(name);
  c.ptr("h", h).ptr("out", out);
  if (c.ok() && out != nullptr) *out = static_cast<T>(value);
  return c.commit();
}

}  // namespace

extern "C" {

ncclResult_t pncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId) {
  Call c("CommGetUniqueId");
  c.comm("comm", comm).ptr("uniqueId", uniqueId);
  if (c.ok() && uniqueId != nullptr) {
    std::memset(uniqueId->internal, 0, sizeof(uniqueId->internal));
    uintptr_t token = fake_nccl::next_token();
    std::memcpy(uniqueId->internal, "fake-grow-id", 12);
    std::memcpy(uniqueId->internal + 16, &token, sizeof(token));
    c.id("out", *uniqueId);
  }
  return c.commit();
}

ncclResult_t pncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  Call c("CommGrow");
  if (comm != nullptr) c.comm("comm", comm);
  else c.ptr("comm", comm);
  c.num("nRanks", nRanks).ptr("uniqueId", uniqueId);
  if (uniqueId != nullptr) c.id("uniqueId.id", *uniqueId);
  c.num("rank", rank).ptr("newcomm", newcomm).config("config", config);
  if (c.ok() && newcomm != nullptr) {
    c.ptr("out", *newcomm = fake_nccl::new_comm(nRanks, comm != nullptr ? comm->rank : rank, 0));
  }
  return c.commit();
}

ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags) {
  Call c("CommSuspend");
  return c.comm("comm", comm).num("flags", flags).commit();
}

ncclResult_t pncclCommResume(ncclComm_t comm) {
  Call c("CommResume");
  return c.comm("comm", comm).commit();
}

// 1000 + the statistic: recognizably the fake's share.
ncclResult_t pncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  Call c("CommMemStats");
  c.comm("comm", comm).num("stat", stat).ptr("value", value);
  if (c.ok() && value != nullptr) *value = 1000 + static_cast<uint64_t>(stat);
  return c.commit();
}

ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  Call c("WinGetUserPtr");
  c.comm("comm", comm).ptr("win", win).ptr("outUserPtr", outUserPtr);
  if (c.ok() && outUserPtr != nullptr) c.ptr("out", *outUserPtr = reinterpret_cast<void*>(fake_nccl::next_token()));
  return c.commit();
}

ncclResult_t pncclSetEncryption(const ncclEncryptionConfig_t* config) {
  Call c("SetEncryption");
  c.ptr("config", config);
  if (config != nullptr) {
    c.num("config.size", static_cast<long long>(config->size)).num("config.magic", config->magic);
    c.num("config.mode", config->mode).str("config.psk", config->psk);
  }
  return c.commit();
}

ncclResult_t pncclParamBind(ncclParamHandle_t* out, const char* key) {
  Call c("ParamBind");
  c.ptr("out", out).str("key", key);
  if (c.ok() && out != nullptr) c.ptr("handle", *out = token_handle());
  return c.commit();
}

ncclResult_t pncclParamGetI8(ncclParamHandle_t h, int8_t* out) { return param_get("ParamGetI8", h, out, -8); }
ncclResult_t pncclParamGetI16(ncclParamHandle_t h, int16_t* out) { return param_get("ParamGetI16", h, out, -16); }
ncclResult_t pncclParamGetI32(ncclParamHandle_t h, int32_t* out) { return param_get("ParamGetI32", h, out, -32); }
ncclResult_t pncclParamGetI64(ncclParamHandle_t h, int64_t* out) { return param_get("ParamGetI64", h, out, -64); }
ncclResult_t pncclParamGetU8(ncclParamHandle_t h, uint8_t* out) { return param_get("ParamGetU8", h, out, 8); }
ncclResult_t pncclParamGetU16(ncclParamHandle_t h, uint16_t* out) { return param_get("ParamGetU16", h, out, 16); }
ncclResult_t pncclParamGetU32(ncclParamHandle_t h, uint32_t* out) { return param_get("ParamGetU32", h, out, 32); }
ncclResult_t pncclParamGetU64(ncclParamHandle_t h, uint64_t* out) { return param_get("ParamGetU64", h, out, 64); }

ncclResult_t pncclParamGetStr(ncclParamHandle_t h, const char** out) {
  Call c("ParamGetStr");
  c.ptr("h", h).ptr("out", out);
  if (c.ok() && out != nullptr) *out = "fake-param-string";
  return c.commit();
}

ncclResult_t pncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len) {
  Call c("ParamGet");
  c.ptr("h", h).ptr("out", out).num("maxLen", maxLen).ptr("len", len);
  static const char kBytes[] = "fake";
  if (c.ok() && out != nullptr && len != nullptr) {
    *len = std::min(maxLen, static_cast<int>(sizeof(kBytes) - 1));
    std::memcpy(out, kBytes, static_cast<size_t>(*len));
  }
  return c.commit();
}

ncclResult_t pncclParamGetParameter(const char* key, const char** value, int* valueLen) {
  Call c("ParamGetParameter");
  c.str("key", key).ptr("value", value).ptr("valueLen", valueLen);
  static const char kValue[] = "fake-value";
  if (c.ok() && value != nullptr && valueLen != nullptr) {
    *value = kValue;
    *valueLen = static_cast<int>(sizeof(kValue) - 1);
  }
  return c.commit();
}

ncclResult_t pncclParamGetAllParameterKeys(const char*** table, int* tableLen) {
  Call c("ParamGetAllParameterKeys");
  c.ptr("table", table).ptr("tableLen", tableLen);
  static const char* kKeys[] = {"FAKE_NCCL_A", "FAKE_NCCL_B"};
  if (c.ok() && table != nullptr && tableLen != nullptr) {
    *table = kKeys;
    *tableLen = 2;
  }
  return c.commit();
}

void pncclParamDumpAll(void) { Call("ParamDumpAll").commit(); }

}  // extern "C"
