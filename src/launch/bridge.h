// The one runtime-to-template bridge (DESIGN §5): a launch::Call becomes layout shapes, a SNAC
// plan and the launch of the one precompiled snac_kernel<C, E, Op> that runs it. The set of
// kernels is one list (instances.h); copies run on a byte element, since a copy does not
// care what it moves.
#pragma once

#include <cuda_runtime.h>

#include "launch/call.h"
#include "snac/handle.h"
#include "snac/plan.h"
#include "snac/policy.h"

namespace purlin::launch {

struct Result {
  snac::Status status = snac::Status::ok;  // planning verdict (bad_argument, staging_too_small...)
  cudaError_t cuda = cudaSuccess;          // launch error, when status is ok
  const char* what = "";                   // static text naming the offending argument, if any
  bool ok() const { return status == snac::Status::ok && cuda == cudaSuccess; }
};

// Enqueues `call` on call.stream for the rank `handle` describes. Every rank of the
// communicator must make the same sequence of calls (the NCCL contract); nothing here
// synchronizes with the host. Safe inside CUDA graph capture.
Result launch(const snac::Handle& handle, const snac::DeviceControl& control,
              const snac::Policy& policy, const Call& call);

// Workers (CTAs) the call's plan uses, e.g. for co-residency budgets; 0 if it cannot be planned.
int workers(const snac::Handle& handle, const snac::Policy& policy, const Call& call);

}  // namespace purlin::launch
