// A communicator's GPU memory (NCCL 2.29): ncclCommSuspend/Resume and ncclCommMemStats.
//
// NCCL suspends what it can rebuild. Purlin's native device state (staging, signals,
// packets) cannot be released alone: every peer's kernels address it through their
// mappings. So it stays allocated through a suspension and counts as persistent memory;
// the real communicator, when there is one, suspends, resumes and reports its own.
#include <nccl.h>

#include <cstdint>

#include "base/log.h"
#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "forward.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

ncclComm_t real_of(const ncclComm* c) { return c->real.load(std::memory_order_acquire); }

std::uint64_t native_bytes(const ncclComm* c) { return c->native != nullptr ? c->native->device_bytes() : 0; }

}  // namespace

extern "C" {

ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags) {
  const char* fn = "ncclCommSuspend";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommSuspend, rc, flags);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclComm_t rc = real_of(comm); rc != nullptr) {
      if (ncclResult_t r = call_real(fn, real_nccl()->CommSuspend, rc, flags); r != ncclSuccess) return r;
    }
    if ((flags & NCCL_SUSPEND_MEM) != 0) {
      comm->suspended.store(true, std::memory_order_release);
      if (comm->native != nullptr)
        PURLIN_INFO(kAlloc, "%s: comm %p rank %d keeps its %llu MiB of native device state (peers map it)", fn,
                    static_cast<void*>(comm), comm->rank,
                    static_cast<unsigned long long>(native_bytes(comm) >> 20));
    }
    return ncclSuccess;
  });
}

ncclResult_t pncclCommResume(ncclComm_t comm) {
  const char* fn = "ncclCommResume";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommResume, rc);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclComm_t rc = real_of(comm); rc != nullptr) {
      if (ncclResult_t r = call_real(fn, real_nccl()->CommResume, rc); r != ncclSuccess) return r;
    }
    comm->suspended.store(false, std::memory_order_release);
    return ncclSuccess;
  });
}

// Purlin's share is its native device state; the real communicator's share, when one exists,
// only the real NCCL knows, so without its ncclCommMemStats there is no honest total.
ncclResult_t pncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  const char* fn = "ncclCommMemStats";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->CommMemStats, rc, stat, value);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "value", value); r != ncclSuccess) return r;
    if (stat != ncclStatGpuMemSuspend && stat != ncclStatGpuMemSuspended && stat != ncclStatGpuMemPersist &&
        stat != ncclStatGpuMemTotal)
      return fail(ncclInvalidArgument, fn, "stat %d is not an ncclCommMemStat_t", static_cast<int>(stat));
    std::uint64_t real_value = 0;
    const ncclComm_t rc = real_of(comm);
    if (rc != nullptr) {
      if (ncclResult_t r = call_real(fn, real_nccl()->CommMemStats, rc, stat, &real_value); r != ncclSuccess) return r;
    }
    switch (stat) {
      case ncclStatGpuMemSuspend: *value = real_value; break;
      case ncclStatGpuMemSuspended:
        *value = rc != nullptr ? real_value : (comm->suspended.load(std::memory_order_acquire) ? 1 : 0);
        break;
      default: *value = native_bytes(comm) + real_value; break;  // persistent, total
    }
    return ncclSuccess;
  });
}

ncclResult_t ncclCommSuspend(ncclComm_t, int) PURLIN_WEAK_ALIAS_OF_P(ncclCommSuspend);
ncclResult_t ncclCommResume(ncclComm_t) PURLIN_WEAK_ALIAS_OF_P(ncclCommResume);
ncclResult_t ncclCommMemStats(ncclComm_t, ncclCommMemStat_t, uint64_t*) PURLIN_WEAK_ALIAS_OF_P(ncclCommMemStats);

}  // extern "C"
