// The native path's two translations, kept free of device state so that CI can test them:
// a validated Descriptor into the launch bridge's Call, and the bridge's Result back into
// an NCCL result with one WARN.
#pragma once

#include <nccl.h>

#include "descriptor.h"
#include "launch/bridge.h"
#include "launch/call.h"

namespace purlin::shim {

// The Call that runs `d`. V tables point into d.v, which must outlive the launch. A user
// operator (op >= ncclNumOps) becomes launch::kPreMulSum with the scalar d carries.
launch::Call to_call(const Descriptor& d);

// ncclSuccess for an ok result; otherwise the NCCL result the failure means, with one WARN
// naming `fn`: a rejected argument is ncclInvalidArgument, a communicator or policy that
// cannot serve the call ncclInvalidUsage, a CUDA launch error ncclUnhandledCudaError.
ncclResult_t launch_result(const char* fn, const launch::Result& r);

}  // namespace purlin::shim
