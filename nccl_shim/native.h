// The native path of the router: collectives on a communicator with SNAC device state run
// on Purlin's kernels through the one launch bridge (launch/bridge.h).
#pragma once

#include <nccl.h>

#include <vector>

#include "descriptor.h"

namespace purlin::shim {

// What the native path adds to validation, done when the call is made (a group issues it
// later): refuses buffers the GPU cannot reach and resolves a user operator's scalar into *d.
ncclResult_t prepare_native(Descriptor* d);

// Launches a prepared collective on its stream, on its communicator's GPU.
ncclResult_t issue_native(const Descriptor& d);

// Launches a rank's prepared sends and receives on one communicator (a group's, or one call
// outside a group) as one point-to-point launch (launch/pairs.h), on the first one's stream;
// the other streams the calls named wait for it, and it for them (NCCL joins a group's
// streams the same way).
ncclResult_t issue_native_pairs(const std::vector<Descriptor>& ops);

}  // namespace purlin::shim
