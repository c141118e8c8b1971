// The one enqueue path. Every collective and point-to-point entry point builds a
// Descriptor and calls enqueue(): validation, routing (native or forwarded to the real
// NCCL) and group deferral are decided here and nowhere else.
#pragma once

#include <nccl.h>

#include <string>

#include "descriptor.h"
#include "route.h"

struct ncclComm;

namespace purlin::shim {

ncclResult_t enqueue(const Descriptor& d);

// An entry point's whole path: a handle of the real NCCL coming back through Purlin's
// symbols goes straight back to it (comm.h: passthrough); everything else is enqueued.
// No exception crosses it.
ncclResult_t submit(const Descriptor& d);

// The communicator-wide routing decision (route.h) for c's peers and PURLIN_NATIVE, with
// its reason, taken once at init.
Route comm_route(const ncclComm* c, std::string* reason);

}  // namespace purlin::shim
