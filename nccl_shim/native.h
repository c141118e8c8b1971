// The native path of the router: collectives on a communicator with SNAC device state run
// on Purlin's kernels through the one launch bridge (launch/bridge.h).
#pragma once

#include <nccl.h>

#include "descriptor.h"

namespace purlin::shim {

// What the native path adds to validation, done when the call is made (a group issues it
// later): refuses buffers the GPU cannot reach and resolves a user operator's scalar into *d.
ncclResult_t prepare_native(Descriptor* d);

// Launches a prepared descriptor on its stream, on its communicator's GPU.
ncclResult_t issue_native(const Descriptor& d);

}  // namespace purlin::shim
