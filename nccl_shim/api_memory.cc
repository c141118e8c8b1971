// Memory entry points: allocation, local registration and collective windows. Each
// range is recorded in Purlin's registries for the zero-copy path.
#include <cuda_runtime.h>
#include <nccl.h>

#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "registration.h"
#include "runtime/memory_registry.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface
using purlin::runtime::Range;
using purlin::runtime::RangeKind;

// The flags NCCL 2.32 defines. They shape the real NCCL's window; Purlin's own record of a
// window (without a real NCCL) has nothing they could change.
constexpr int kKnownWinFlags =
    NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING | NCCL_WIN_GIN_ONLY | NCCL_WIN_CFT_COUNTED;

purlin::runtime::MemoryRegistry& allocations() {
  static auto* registry = new purlin::runtime::MemoryRegistry();  // outlives static destructors
  return *registry;
}

}  // namespace

extern "C" {

// With a real NCCL, its allocator is used: it picks the cuMem handle types that its
// registration and window paths require. Without one, plain cudaMalloc memory.
ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  const char* fn = "ncclMemAlloc";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ptr(fn, "ptr", ptr); r != ncclSuccess) return r;
    *ptr = nullptr;
    if (size == 0) return ncclSuccess;
    const RealNccl* rn = real_nccl();
    if (rn != nullptr) {
      if (ncclResult_t r = rn->MemAlloc(ptr, size); r != ncclSuccess) return r;
    } else if (cudaMalloc(ptr, size) != cudaSuccess) {
      cudaError_t e = cudaGetLastError();
      return fail(ncclUnhandledCudaError, fn, "cudaMalloc of %zu bytes failed: %s", size, cudaGetErrorString(e));
    }
    allocations().add(Range{*ptr, size, RangeKind::kAllocation, *ptr, rn != nullptr});
    return ncclSuccess;
  });
}

ncclResult_t pncclMemFree(void* ptr) {
  const char* fn = "ncclMemFree";
  return guarded(fn, [&] {
    if (ptr == nullptr) return ncclSuccess;
    auto range = allocations().remove(ptr);
    if (!range) return fail(ncclInvalidArgument, fn, "ptr %p was not returned by ncclMemAlloc", ptr);
    if (range->external) return real_nccl()->MemFree(ptr);
    if (cudaFree(ptr) != cudaSuccess) {
      cudaError_t e = cudaGetLastError();
      return fail(ncclUnhandledCudaError, fn, "cudaFree(%p) failed: %s", ptr, cudaGetErrorString(e));
    }
    return ncclSuccess;
  });
}

// Local (not collective): recorded now, handed to the real NCCL once its communicator
// exists, so registering never forces the collective creation of a real communicator.
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const char* fn = "ncclCommRegister";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommRegister, rc, buff, size, handle);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "handle", handle); r != ncclSuccess) return r;
    if (size != 0) {
      if (ncclResult_t r = check_ptr(fn, "buff", buff); r != ncclSuccess) return r;
    }
    auto* reg = new Registration{buff, size, nullptr};
    if (ncclComm_t rc = comm->real.load(std::memory_order_acquire); rc != nullptr) {
      if (ncclResult_t r = real_nccl()->CommRegister(rc, buff, size, &reg->real_handle); r != ncclSuccess) {
        delete reg;
        return r;
      }
    }
    comm->core->registry().add(Range{buff, size, RangeKind::kRegistration, reg, false});
    *handle = reg;
    return ncclSuccess;
  });
}

ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) {
  const char* fn = "ncclCommDeregister";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommDeregister, rc, handle);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    auto range = comm->core->registry().find_key(handle);
    if (!range || range->kind != RangeKind::kRegistration)
      return fail(ncclInvalidArgument, fn, "handle %p is not a registration of this comm", handle);
    comm->core->registry().remove(handle);
    auto* reg = static_cast<Registration*>(handle);
    ncclResult_t res = ncclSuccess;
    if (reg->real_handle != nullptr)
      res = real_nccl()->CommDeregister(comm->real.load(std::memory_order_acquire), reg->real_handle);
    delete reg;
    return res;
  });
}

// Collective: with a real NCCL the window is the real one (device code dereferences it).
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  const char* fn = "ncclCommWindowRegister";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommWindowRegister, rc, buff, size, win, winFlags);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "win", win); r != ncclSuccess) return r;
    if (size != 0) {
      if (ncclResult_t r = check_ptr(fn, "buff", buff); r != ncclSuccess) return r;
    }
    if ((winFlags & ~kKnownWinFlags) != 0)
      return fail(ncclInvalidArgument, fn, "winFlags 0x%x has unknown bits", winFlags);
    if (real_nccl() != nullptr) {
      if (ncclResult_t r = ensure_real_comm(fn, comm); r != ncclSuccess) return r;
      ncclResult_t r = call_real(fn, real_nccl()->CommWindowRegister, comm->real.load(std::memory_order_acquire),
                                 buff, size, win, winFlags);
      if (r != ncclSuccess) return r;
      comm->core->registry().add(Range{buff, size, RangeKind::kWindow, *win, true});
      return ncclSuccess;
    }
    auto* native = new NativeWindow{buff, size};
    comm->core->registry().add(Range{buff, size, RangeKind::kWindow, native, false});
    *win = reinterpret_cast<ncclWindow_t>(native);
    return ncclSuccess;
  });
}

ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  const char* fn = "ncclCommWindowDeregister";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr) return call_real(fn, real_nccl()->CommWindowDeregister, rc, win);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    auto range = comm->core->registry().find_key(win);
    if (!range || range->kind != RangeKind::kWindow)
      return fail(ncclInvalidArgument, fn, "win %p is not a window of this comm", static_cast<void*>(win));
    comm->core->registry().remove(win);
    if (range->external)
      return call_real(fn, real_nccl()->CommWindowDeregister, comm->real.load(std::memory_order_acquire), win);
    delete reinterpret_cast<NativeWindow*>(win);
    return ncclSuccess;
  });
}

ncclResult_t ncclMemAlloc(void**, size_t) PURLIN_WEAK_ALIAS_OF_P(ncclMemAlloc);
ncclResult_t ncclMemFree(void*) PURLIN_WEAK_ALIAS_OF_P(ncclMemFree);
ncclResult_t ncclCommRegister(const ncclComm_t, void*, size_t, void**) PURLIN_WEAK_ALIAS_OF_P(ncclCommRegister);
ncclResult_t ncclCommDeregister(const ncclComm_t, void*) PURLIN_WEAK_ALIAS_OF_P(ncclCommDeregister);
ncclResult_t ncclCommWindowRegister(ncclComm_t, void*, size_t, ncclWindow_t*, int)
    PURLIN_WEAK_ALIAS_OF_P(ncclCommWindowRegister);
ncclResult_t ncclCommWindowDeregister(ncclComm_t, ncclWindow_t) PURLIN_WEAK_ALIAS_OF_P(ncclCommWindowDeregister);

}  // extern "C"
