// Process-wide settings of NCCL 2.30-2.32: the parameter API (ncclParam*) and ncclSetEncryption.
//
// The parameters are the real NCCL's (NCCL_* settings, with their defaults and documentation),
// so every ncclParam* call is the real NCCL's own; the handles and strings it returns are its.
// Encryption concerns sockets, and Purlin has sockets of its own (its bootstrap).
#include <nccl.h>

#include <cstddef>

#include "checks.h"
#include "errors.h"
#include "export.h"
#include "forward.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

template <class Entry, class... Args>
ncclResult_t param_call(const char* fn, Entry RealNcclEntries::*entry, Args... args) {
  return guarded(fn, [&] { return forward_global(fn, entry, args...); });
}

}  // namespace

extern "C" {

ncclResult_t pncclParamBind(ncclParamHandle_t* out, const char* key) {
  return param_call("ncclParamBind", &RealNcclEntries::ParamBind, out, key);
}
ncclResult_t pncclParamGetI8(ncclParamHandle_t h, int8_t* out) {
  return param_call("ncclParamGetI8", &RealNcclEntries::ParamGetI8, h, out);
}
ncclResult_t pncclParamGetI16(ncclParamHandle_t h, int16_t* out) {
  return param_call("ncclParamGetI16", &RealNcclEntries::ParamGetI16, h, out);
}
ncclResult_t pncclParamGetI32(ncclParamHandle_t h, int32_t* out) {
  return param_call("ncclParamGetI32", &RealNcclEntries::ParamGetI32, h, out);
}
ncclResult_t pncclParamGetI64(ncclParamHandle_t h, int64_t* out) {
  return param_call("ncclParamGetI64", &RealNcclEntries::ParamGetI64, h, out);
}
ncclResult_t pncclParamGetU8(ncclParamHandle_t h, uint8_t* out) {
  return param_call("ncclParamGetU8", &RealNcclEntries::ParamGetU8, h, out);
}
ncclResult_t pncclParamGetU16(ncclParamHandle_t h, uint16_t* out) {
  return param_call("ncclParamGetU16", &RealNcclEntries::ParamGetU16, h, out);
}
ncclResult_t pncclParamGetU32(ncclParamHandle_t h, uint32_t* out) {
  return param_call("ncclParamGetU32", &RealNcclEntries::ParamGetU32, h, out);
}
ncclResult_t pncclParamGetU64(ncclParamHandle_t h, uint64_t* out) {
  return param_call("ncclParamGetU64", &RealNcclEntries::ParamGetU64, h, out);
}
ncclResult_t pncclParamGetStr(ncclParamHandle_t h, const char** out) {
  return param_call("ncclParamGetStr", &RealNcclEntries::ParamGetStr, h, out);
}
ncclResult_t pncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len) {
  return param_call("ncclParamGet", &RealNcclEntries::ParamGet, h, out, maxLen, len);
}
ncclResult_t pncclParamGetParameter(const char* key, const char** value, int* valueLen) {
  return param_call("ncclParamGetParameter", &RealNcclEntries::ParamGetParameter, key, value, valueLen);
}
ncclResult_t pncclParamGetAllParameterKeys(const char*** table, int* tableLen) {
  return param_call("ncclParamGetAllParameterKeys", &RealNcclEntries::ParamGetAllParameterKeys, table, tableLen);
}

// Without a real NCCL there is nothing to dump; the WARN says so.
void pncclParamDumpAll(void) {
  const char* fn = "ncclParamDumpAll";
  (void)guarded(fn, [&] {
    const RealNccl* rn = nullptr;
    if (ncclResult_t r = require_real(fn, &rn); r != ncclSuccess) return r;
    if (rn->ParamDumpAll == nullptr) return missing_entry(fn);
    rn->ParamDumpAll();
    return ncclSuccess;
  });
}

// Plaintext is what Purlin's bootstrap and every NCCL before 2.32 use, so asking for it always
// succeeds. A pre-shared key would leave Purlin's own bootstrap traffic (unique ids, the real
// NCCL's ids, peer addresses) in the clear while the caller believes the sockets encrypted:
// refused rather than half honored.
ncclResult_t pncclSetEncryption(const ncclEncryptionConfig_t* config) {
  const char* fn = "ncclSetEncryption";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ptr(fn, "config", config); r != ncclSuccess) return r;
    if (config->magic != NCCL_API_MAGIC)
      return fail(ncclInvalidArgument, fn,
                  "config was not initialized with NCCL_ENCRYPTION_CONFIG_INITIALIZER (magic 0x%x)", config->magic);
    if (config->size < offsetof(ncclEncryptionConfig_t, mode) + sizeof(int))
      return fail(ncclInvalidArgument, fn, "config->size %zu is not a known ncclEncryptionConfig_t size",
                  config->size);
    if (config->mode == NCCL_ENCRYPTION_MODE_PSK)
      return fail(ncclInvalidUsage, fn,
                  "config->mode NCCL_ENCRYPTION_MODE_PSK: Purlin's bootstrap sockets cannot be encrypted");
    if (config->mode != NCCL_ENCRYPTION_MODE_NONE)
      return fail(ncclInvalidArgument, fn, "config->mode %d is not an ncclEncryptionMode_t", config->mode);
    const RealNccl* rn = real_nccl();
    if (rn == nullptr || rn->SetEncryption == nullptr) return ncclSuccess;
    return rn->SetEncryption(config);
  });
}

ncclResult_t ncclParamBind(ncclParamHandle_t*, const char*) PURLIN_WEAK_ALIAS_OF_P(ncclParamBind);
ncclResult_t ncclParamGetI8(ncclParamHandle_t, int8_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetI8);
ncclResult_t ncclParamGetI16(ncclParamHandle_t, int16_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetI16);
ncclResult_t ncclParamGetI32(ncclParamHandle_t, int32_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetI32);
ncclResult_t ncclParamGetI64(ncclParamHandle_t, int64_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetI64);
ncclResult_t ncclParamGetU8(ncclParamHandle_t, uint8_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetU8);
ncclResult_t ncclParamGetU16(ncclParamHandle_t, uint16_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetU16);
ncclResult_t ncclParamGetU32(ncclParamHandle_t, uint32_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetU32);
ncclResult_t ncclParamGetU64(ncclParamHandle_t, uint64_t*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetU64);
ncclResult_t ncclParamGetStr(ncclParamHandle_t, const char**) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetStr);
ncclResult_t ncclParamGet(ncclParamHandle_t, void*, int, int*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGet);
ncclResult_t ncclParamGetParameter(const char*, const char**, int*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetParameter);
ncclResult_t ncclParamGetAllParameterKeys(const char***, int*) PURLIN_WEAK_ALIAS_OF_P(ncclParamGetAllParameterKeys);
void ncclParamDumpAll(void) PURLIN_WEAK_ALIAS_OF_P(ncclParamDumpAll);
ncclResult_t ncclSetEncryption(const ncclEncryptionConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclSetEncryption);

}  // extern "C"
