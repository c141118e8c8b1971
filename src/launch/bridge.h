// The one runtime-to-template bridge (DESIGN §5): a launch::Call becomes layout shapes, a SNAC
// plan and the launch of the one precompiled snac_kernel<C, E, Op> that runs it. The set of
// kernels is one list (instances.h); copies run on a byte element, since a copy does not
// care what it moves.
#pragma once

#include <cuda_runtime.h>

#include "launch/call.h"
#include "launch/kernel_smem.h"
#include "snac/handle.h"
#include "snac/plan.h"
#include "snac/policy.h"

namespace purlin::launch {

struct Result {
  snac::Status status = snac::Status::ok;  // planning verdict (bad_argument, staging_too_small...)
  cudaError_t cuda = cudaSuccess;          // launch error, when status is ok
  const char* what = "";                   // static text naming the offending argument, if any
  bool kernel = false;  // a SNAC kernel was enqueued (it uses the communicator's memory)
  bool ok() const { return status == snac::Status::ok && cuda == cudaSuccess; }
};

// Enqueues `call` on call.stream for the rank `handle` describes, with the shared memory
// load_kernels chose for the communicator. Every rank of the communicator must make the same
// sequence of calls (the NCCL contract); nothing here synchronizes with the host. Safe inside
// CUDA graph capture.
Result launch(const snac::Handle& handle, const snac::DeviceControl& control,
              const snac::Policy& policy, const KernelSmem& smem, const Call& call);

// The shared memory a communicator of `ranks` launches each kernel family with on the current
// device: select_smem over the device's limits, the per-block one lowered by
// PURLIN_SMEM_LIMIT_BYTES when set (to imitate a GPU with less on a larger one; the per-SM one,
// which decides how many CTAs are resident, stays the hardware's). *smem is not ok when a
// kernel cannot fit at all.
//
// Also loads every kernel of the list into the current device's context and allows it the
// shared memory the hardware allows (not the environment's limit, which applies per
// communicator: every later choice stays within it), once per device and process. CUDA loads
// kernels lazily by default
// (CUDA_MODULE_LOADING=LAZY): the first launch of a kernel loads it, and loading may wait for
// the kernels already running on the device to finish (the CUDA programming guide's
// lazy-loading caveat on concurrent execution). A SNAC kernel waits for the other ranks'
// kernels and theirs for it, so a first launch while peers run can hang: 8 ranks sharing one
// H200 hung in 2 of 8 benchmark processes at a collective's first call. Setting a function
// attribute is a context-level operation too, so it is kept off the launch path, where peers'
// kernels may already be waiting for this one. Called when a native communicator is created,
// before any of its kernels run. A cudaDeviceReset drops the attributes; launches after it
// fail with a CUDA error instead of running.
cudaError_t load_kernels(int ranks, KernelSmem* smem);

// Workers (CTAs) the call's plan uses, e.g. for co-residency budgets; 0 if it cannot be planned.
int workers(const snac::Handle& handle, const snac::Policy& policy, const Call& call);

}  // namespace purlin::launch
