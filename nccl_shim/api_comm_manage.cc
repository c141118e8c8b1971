// Communicator queries and teardown.
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "nccl_api.h"
#include "peer_watch.h"
#include "real_nccl.h"
#include "registration.h"
#include "runtime/teardown.h"
#include "snac/plan.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

ncclComm_t real_of(const ncclComm* c) { return c->real.load(std::memory_order_acquire); }

// The native state goes through runtime::retire: it waits for this communicator's own
// launches (bounded on abort, which sets the abort word first) and frees the peer-visible
// memory only once every peer has left or died. The watcher stops first: from here on, peers
// may end their connections in order.
void retire_native(ncclComm* c, bool abort) {
  stop_peer_watch(c);
  if (c->native == nullptr) return;
  purlin::runtime::retire(std::move(c->native), c->core->share_bootstrap(),
                          abort ? purlin::runtime::Ending::kAbort : purlin::runtime::Ending::kDestroy);
}

// Ends a communicator: the real one first (it may still reference Purlin's buffers),
// then Purlin's own state. An abort of a communicator without native state interrupts its
// bootstrap, where an unfinished init may wait; a native one's bootstrap is idle by now and
// still carries the farewells.
ncclResult_t teardown(ncclComm* c, bool abort) {
  ncclResult_t res = ncclSuccess;
  if (abort && c->native) c->native->abort();
  if (abort && c->core && !c->native) c->core->abort();
  if (ncclComm_t rc = real_of(c); rc != nullptr) {
    const RealNccl* rn = real_nccl();
    res = abort ? rn->CommAbort(rc) : rn->CommDestroy(rc);
    // Only now: the real NCCL calls its own API on rc while tearing it down.
    real_handle_remove(rc);
  }
  retire_native(c, abort);
  free_registrations(c);
  live_remove(c);
  delete_comm(c);
  return res;
}

// A failure a native kernel reported (a peer stopped, a wait timed out) is sticky, as an
// asynchronous NCCL error is: the communicator moves to ncclSystemError, with one WARN.
void native_async_error(ncclComm* c) {
  const purlin::snac::Status st = c->native->status();
  if (st == purlin::snac::Status::ok) return;
  ncclResult_t expected = ncclSuccess;
  if (c->state.compare_exchange_strong(expected, ncclSystemError, std::memory_order_acq_rel)) {
    const std::string stall = c->native->stall_report();
    fail(ncclSystemError, "ncclCommGetAsyncError",
         "comm %p rank %d: a native collective failed on the device (%s%s%s); abort the communicator",
         static_cast<void*>(c), c->rank, purlin::snac::to_string(st), stall.empty() ? "" : ": ",
         stall.c_str());
  }
}

// The integer queries: a ready communicator, a non-null out pointer, one field.
ncclResult_t query(const char* fn, const char* out_name, const ncclComm* comm, int* out, int ncclComm::*field) {
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, out_name, out); r != ncclSuccess) return r;
    *out = comm->*field;
    return ncclSuccess;
  });
}

// What Purlin says of a native communicator: its own rank, size and device, and no NCCL
// device API (no GIN, no multimem, no CFT, no LSA teams), because Purlin's kernels serve its
// collectives and none of that. nvmlDev is -1: Purlin does not use NVML.
ncclCommProperties_t native_properties(const ncclComm* c) {
  ncclCommProperties_t p{};
  p.rank = c->rank;
  p.nRanks = c->nranks;
  p.cudaDev = c->cuda_device;
  p.nvmlDev = -1;
  p.deviceApiSupport = false;
  p.multimemSupport = false;
  p.ginType = NCCL_GIN_TYPE_NONE;
  p.railedGinType = NCCL_GIN_TYPE_NONE;
  p.commHash = c->id_hash;
  p.ginConnectionType = NCCL_GIN_CONNECTION_NONE;
  return p;
}

}  // namespace

extern "C" {

// A native communicator is described by Purlin (native_properties). A forwarded one runs on
// the real NCCL, whose communicator the properties then describe; like ncclDevCommCreate,
// which usually follows, the query may create that communicator (collectively).
ncclResult_t pncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props) {
  const char* fn = "ncclCommQueryProperties";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->CommQueryProperties, rc, props);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "props", props); r != ncclSuccess) return r;
    if (props->magic != NCCL_API_MAGIC)
      return fail(ncclInvalidUsage, fn, "props was not initialized with NCCL_COMM_PROPERTIES_INITIALIZER");
    if (comm->native == nullptr) {
      const RealNccl* rn = nullptr;
      if (ncclResult_t r = require_real(fn, &rn); r != ncclSuccess) return r;
      if (rn->CommQueryProperties == nullptr) return missing_entry(fn);
      if (ncclResult_t r = ensure_real_comm(fn, comm); r != ncclSuccess) return r;
      return rn->CommQueryProperties(real_of(comm), props);
    }
    // The struct only grows at its end: write the fields the caller's version has.
    const ncclCommProperties_t mine = native_properties(comm);
    constexpr size_t kFirst = offsetof(ncclCommProperties_t, rank);
    const size_t end = std::min(props->size, sizeof(ncclCommProperties_t));
    if (end > kFirst)
      std::memcpy(reinterpret_cast<char*>(props) + kFirst, reinterpret_cast<const char*>(&mine) + kFirst, end - kFirst);
    return ncclSuccess;
  });
}

ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  const char* fn = "ncclCommFinalize";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    // Purlin's kernels complete on the application's streams; retiring the native state
    // waits for them. Only the real NCCL may still hold operations to flush.
    comm->finalized.store(true, std::memory_order_release);
    retire_native(comm, false);
    if (ncclComm_t rc = real_of(comm); rc != nullptr) return real_nccl()->CommFinalize(rc);
    return ncclSuccess;
  });
}

ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  const char* fn = "ncclCommDestroy";
  return guarded(fn, [&] {
    if (comm == nullptr) return ncclSuccess;  // NCCL accepts a NULL communicator here
    if (ncclResult_t r = check_live(fn, comm); r != ncclSuccess) return r;
    return teardown(comm, false);
  });
}

ncclResult_t pncclCommAbort(ncclComm_t comm) {
  const char* fn = "ncclCommAbort";
  return guarded(fn, [&] {
    if (comm == nullptr) return ncclSuccess;
    if (ncclResult_t r = check_live(fn, comm); r != ncclSuccess) return r;
    return teardown(comm, true);
  });
}

ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  const char* fn = "ncclCommRevoke";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (revokeFlags != NCCL_REVOKE_DEFAULT)
      return fail(ncclInvalidArgument, fn, "revokeFlags 0x%x is not NCCL_REVOKE_DEFAULT", revokeFlags);
    ncclResult_t res = ncclSuccess;
    // Revoking ends in-flight work; for native kernels that is their abort word.
    if (comm->native != nullptr) comm->native->abort();
    if (ncclComm_t rc = real_of(comm); rc != nullptr) res = call_real(fn, real_nccl()->CommRevoke, rc, revokeFlags);
    comm->revoked.store(true, std::memory_order_release);
    return res;
  });
}

ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  const char* fn = "ncclCommGetAsyncError";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->CommGetAsyncError, rc, asyncError);
    if (ncclResult_t r = check_live(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "asyncError", asyncError); r != ncclSuccess) return r;
    *asyncError = comm->state.load(std::memory_order_acquire);
    // The watcher's thread reported the loss; this thread's ncclGetLastError names it too.
    if (const int lost = comm->lost_rank.load(std::memory_order_acquire); lost >= 0 && *asyncError == ncclRemoteError)
      record_error(fn, describe_lost(comm, lost).c_str());
    // Only a finished init has published `native` (state is stored after it, with release).
    if (*asyncError == ncclSuccess && comm->native != nullptr) {
      native_async_error(comm);
      *asyncError = comm->state.load(std::memory_order_acquire);
    }
    if (*asyncError == ncclSuccess) {
      if (ncclComm_t rc = real_of(comm); rc != nullptr) return real_nccl()->CommGetAsyncError(rc, asyncError);
    }
    return ncclSuccess;
  });
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  return query("ncclCommCount", "count", comm, count, &ncclComm::nranks);
}

ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  return query("ncclCommCuDevice", "device", comm, device, &ncclComm::cuda_device);
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  return query("ncclCommUserRank", "rank", comm, rank, &ncclComm::rank);
}

ncclResult_t ncclCommQueryProperties(ncclComm_t, ncclCommProperties_t*) PURLIN_WEAK_ALIAS_OF_P(ncclCommQueryProperties);
ncclResult_t ncclCommFinalize(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclCommFinalize);
ncclResult_t ncclCommDestroy(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclCommDestroy);
ncclResult_t ncclCommAbort(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclCommAbort);
ncclResult_t ncclCommRevoke(ncclComm_t, int) PURLIN_WEAK_ALIAS_OF_P(ncclCommRevoke);
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t*) PURLIN_WEAK_ALIAS_OF_P(ncclCommGetAsyncError);
ncclResult_t ncclCommCount(const ncclComm_t, int*) PURLIN_WEAK_ALIAS_OF_P(ncclCommCount);
ncclResult_t ncclCommCuDevice(const ncclComm_t, int*) PURLIN_WEAK_ALIAS_OF_P(ncclCommCuDevice);
ncclResult_t ncclCommUserRank(const ncclComm_t, int*) PURLIN_WEAK_ALIAS_OF_P(ncclCommUserRank);

}  // extern "C"
