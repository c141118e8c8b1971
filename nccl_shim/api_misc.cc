// Version, errors, debug, groups and user-defined reduction operators.
#include <nccl.h>

#include <optional>

#include "base/log.h"
#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "group.h"
#include "nccl_api.h"  // ncclResetDebugInit as a function
#include "real_nccl.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

// NCCL re-reads its debug settings here; Purlin re-reads its own, fault injection included
// (base/fault.h: how a test arms one site after another).
void reset_debug(const char* fn) {
  (void)guarded(fn, [] {
    purlin::log::reset();
    purlin::fault::reload();
    if (const RealNccl* rn = real_nccl(); rn != nullptr && rn->ResetDebugInit != nullptr) rn->ResetDebugInit();
    return ncclSuccess;
  });
}

const char* error_string(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the Purlin developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    case ncclTimeout: return "timeout";  // NCCL 2.31
    default: return "unknown result code";
  }
}

// What ncclGetErrorString and ncclGetLastError return when they fail inside (after the WARN).
constexpr const char* kInternalFailureText = "Purlin internal error (see its WARN line)";

}  // namespace

extern "C" {

// Frameworks compare this with the version they were built against, so it reports the
// real NCCL's version when one is found, else the version of the headers Purlin uses.
ncclResult_t pncclGetVersion(int* version) {
  return guarded("ncclGetVersion", [&] {
    if (ncclResult_t r = check_ptr("ncclGetVersion", "version", version); r != ncclSuccess) return r;
    const RealNccl* rn = real_nccl();
    *version = rn != nullptr ? rn->version : NCCL_VERSION_CODE;
    return ncclSuccess;
  });
}

const char* pncclGetErrorString(ncclResult_t result) {
  return guarded_value("ncclGetErrorString", kInternalFailureText, [result] { return error_string(result); });
}

// Purlin's own last failure on this thread first; otherwise the real NCCL's.
const char* pncclGetLastError(ncclComm_t comm) {
  return guarded_value("ncclGetLastError", kInternalFailureText, [comm]() -> const char* {
    const char* mine = last_error();
    if (mine[0] != '\0') return mine;
    const RealNccl* rn = real_nccl();
    if (rn == nullptr) return "";
    ncclComm_t rc = (comm != nullptr && live_contains(comm)) ? comm->real.load(std::memory_order_acquire) : nullptr;
    return rn->GetLastError(rc);
  });
}

void pncclResetDebugInit() { reset_debug("ncclResetDebugInit"); }

// Not declared in nccl.h but exported by NCCL (2.28.9 to 2.32.3); kept for ABI identity.
void ncclResetDebugInitInternal() { reset_debug("ncclResetDebugInitInternal"); }

ncclResult_t pncclGroupStart() {
  return guarded("ncclGroupStart", [] { return group_start(); });
}

ncclResult_t pncclGroupEnd() {
  return guarded("ncclGroupEnd", [] { return group_end("ncclGroupEnd", nullptr); });
}

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  const char* fn = "ncclGroupSimulateEnd";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ptr(fn, "simInfo", simInfo); r != ncclSuccess) return r;
    return group_end(fn, simInfo);
  });
}

// On a native communicator Purlin's kernels run the reductions, so the operator is
// Purlin's own and the real NCCL is not involved (there may be no real communicator, and
// ranks sharing a GPU could not create one). Otherwise the real NCCL creates it. Either
// way the communicator's table remembers it so that validation accepts it.
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm) {
  const char* fn = "ncclRedOpCreatePreMulSum";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->RedOpCreatePreMulSum, op, scalar, datatype, residence, rc);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "op", op); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "scalar", scalar); r != ncclSuccess) return r;
    if (ncclResult_t r = check_type(fn, datatype); r != ncclSuccess) return r;
    if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)
      return fail(ncclInvalidArgument, fn, "residence %d is not an ncclScalarResidence_t", static_cast<int>(residence));
    if (comm->native != nullptr) {
      std::optional<ncclRedOp_t> made = comm->user_ops.create(scalar, datatype, type_size(datatype), residence);
      if (!made) return fail(ncclInvalidUsage, fn, "op: every ncclRedOp_t id of this comm is in use");
      *op = *made;
      return ncclSuccess;
    }
    if (ncclResult_t r = ensure_real_comm(fn, comm); r != ncclSuccess) return r;
    ncclResult_t res = real_nccl()->RedOpCreatePreMulSum(op, scalar, datatype, residence,
                                                         comm->real.load(std::memory_order_acquire));
    if (res == ncclSuccess) comm->user_ops.record(*op, datatype, residence);
    return res;
  });
}

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  const char* fn = "ncclRedOpDestroy";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->RedOpDestroy, op, rc);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (!comm->user_ops.erase(op))
      return fail(ncclInvalidArgument, fn, "op %d was not created on this comm", static_cast<int>(op));
    if (comm->native != nullptr) return ncclSuccess;
    return real_nccl()->RedOpDestroy(op, comm->real.load(std::memory_order_acquire));
  });
}

ncclResult_t ncclGetVersion(int*) PURLIN_WEAK_ALIAS_OF_P(ncclGetVersion);
const char* ncclGetErrorString(ncclResult_t) PURLIN_WEAK_ALIAS_OF_P(ncclGetErrorString);
const char* ncclGetLastError(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclGetLastError);
void ncclResetDebugInit() PURLIN_WEAK_ALIAS_OF_P(ncclResetDebugInit);
ncclResult_t ncclGroupStart() PURLIN_WEAK_ALIAS_OF_P(ncclGroupStart);
ncclResult_t ncclGroupEnd() PURLIN_WEAK_ALIAS_OF_P(ncclGroupEnd);
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t*) PURLIN_WEAK_ALIAS_OF_P(ncclGroupSimulateEnd);
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t, ncclComm_t)
    PURLIN_WEAK_ALIAS_OF_P(ncclRedOpCreatePreMulSum);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclRedOpDestroy);

}  // extern "C"
