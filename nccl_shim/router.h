// The one enqueue path. Every collective and point-to-point entry point builds a
// Descriptor and calls enqueue(): validation, routing (native or forwarded to the real
// NCCL) and group deferral are decided here and nowhere else.
#pragma once

#include <nccl.h>

#include <string>

#include "descriptor.h"

struct ncclComm;

namespace purlin::shim {

enum class Route : uint8_t { kNative, kForward };

ncclResult_t enqueue(const Descriptor& d);

// The communicator-wide routing decision and its reason, for the INFO line at init.
Route comm_route(const ncclComm* c, std::string* reason);

}  // namespace purlin::shim
