// The native path's translations, kept free of device state so that CI can test them: a
// validated Descriptor into the launch bridge's Call (or into nothing at all), and the
// bridge's Result back into an NCCL result with one WARN.
#pragma once

#include <nccl.h>

#include "descriptor.h"
#include "launch/bridge.h"
#include "launch/call.h"

namespace purlin::shim {

// Whether a native call on a communicator of `nranks` moves nothing at all: one rank, in
// place, no per-call config, and no operator that transforms the one contribution (PreMulSum
// scales it). NCCL
// launches nothing for such a call either, so the router returns at once, with nothing to
// check, defer or launch (nccl-tests -g 1 times exactly this path in place).
bool moves_nothing(const Descriptor& d, int nranks);

// The Call that runs `d`. V tables point into d.v, which must outlive the launch. A user
// operator (op >= ncclNumOps) becomes launch::kPreMulSum with the scalar d carries.
launch::Call to_call(const Descriptor& d);

// ncclSuccess for an ok result; otherwise the NCCL result the failure means, with one WARN
// naming `fn`: a rejected argument is ncclInvalidArgument, a communicator or policy that
// cannot serve the call ncclInvalidUsage, a CUDA launch error ncclUnhandledCudaError.
ncclResult_t launch_result(const char* fn, const launch::Result& r);

}  // namespace purlin::shim
