// Noticing a peer process that died while a native communicator is alive (issue 13).
//
// Every rank of a native communicator holds a bootstrap connection from every peer for the
// communicator's life (Bootstrap::connect_all); a peer's kernel closes them when its process
// ends. A rank leaving in order says farewell first (runtime/teardown.h), so a connection that
// ends without one means the peer died. One thread per native communicator checks every
// kPeriod: on a loss it records the rank, moves the communicator to ncclRemoteError with one
// WARN naming it (what ncclCommGetAsyncError then returns, as NCCL does for a remote failure),
// and sets the device abort word, so that this rank's kernels waiting on the dead peer give up
// instead of waiting out PURLIN_TIMEOUT_S. The application then aborts the communicator.
#pragma once

#include <string>

#include "comm.h"

namespace purlin::shim {

// After the native state exists, before init publishes success. A watcher that cannot start
// is reported (one WARN) and leaves the communicator unwatched, as before this existed.
void start_peer_watch(ncclComm* c);
// Before anything the watcher uses (native state, bootstrap) goes, and before this rank's
// farewell: after it, peers end their connections in order. Idempotent.
void stop_peer_watch(ncclComm* c);
// What the watcher reported of the lost rank (c->lost_rank >= 0): which rank, its process, its GPU.
std::string describe_lost(const ncclComm* c, int lost);

}  // namespace purlin::shim
