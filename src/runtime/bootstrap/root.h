// The root's side of the rendezvous: a detached thread, started by create_unique_id, that
// collects one hello per rank and answers every rank with the table of all listen addresses.
//
// It multiplexes all its connections with poll(), so a stranger that connects and stays silent
// (or fails the challenge-response) cannot delay the legitimate ranks, and admits connections
// under the bounds of admission.h, so strangers cannot lock the ranks out either. It exits,
// closing its sockets, once the group has formed or after `timeout_s` seconds without a rank
// joining.
#pragma once

#include <nccl.h>

#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"

namespace purlin::runtime {

// PURLIN_BOOTSTRAP_TIMEOUT in seconds (default 300, at least 1). The root and the ranks share it:
// no bootstrap wait, rendezvous or message, lasts longer.
int bootstrap_timeout_s();

// Takes ownership of `listener`. Fails only if the thread cannot be started.
ncclResult_t start_root(net::Socket listener, const Secret& secret, int timeout_s);

}  // namespace purlin::runtime
