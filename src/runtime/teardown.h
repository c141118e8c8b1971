// Ending a communicator's device state without freeing memory that a peer may still read.
//
//   1. wait for this rank's own launches: the events of the streams it launched on, never the
//      whole device (runtime/launch_events.h); an abort sets the abort word first, so that
//      waiting kernels give up, and waits a bounded time
//   2. say farewell to every peer (bootstrap): this rank reads no peer's memory any more
//   3. unmap the peers' blocks and free the rank-private memory: only this rank used them
//      (an abort does this and the rest on a background thread, since cudaFree may wait for
//      other work of the process on the GPU)
//   4. free the peer-visible block once every peer has said farewell or its process has died;
//      at once when all have, else on a background thread, so that ranks of one process that
//      are destroyed one after another from one thread (ncclCommInitAll) do not wait for each
//      other. A peer silent for the whole bootstrap timeout keeps the block allocated (a leak
//      with a WARN) rather than risk a read of freed memory.
//
// Abort never waits for a peer: a dead one cannot answer, and ncclCommAbort returns within a
// second. Launches that do not end within its bound leave everything of this rank allocated,
// and no farewell is said, since those kernels may still read the peers' memory.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "runtime/bootstrap/bootstrap.h"

namespace purlin::runtime {

// What retire needs of a communicator's device state (DeviceState; tests fake it). Its
// destructor frees the peer-visible memory, unless leak() was called.
class RetiringState {
 public:
  virtual ~RetiringState() = default;
  // Sets the abort word: this rank's waiting kernels give up.
  virtual void abort() = 0;
  // Waits for this rank's launches, up to `bound`: true when they have all ended.
  virtual bool quiesce(std::optional<std::chrono::milliseconds> bound) = 0;
  // Frees what only this rank's launches used, and unmaps the peers' memory.
  virtual void release_private() = 0;
  // Destruction frees nothing: something may still use the memory.
  virtual void leak() = 0;
};

enum class Ending { kDestroy, kAbort };

// `bootstrap` is the communicator's; step 4 may hold it after the communicator is gone. Its
// calls must be free for this (no watcher of it still running).
void retire(std::unique_ptr<RetiringState> state, std::shared_ptr<Bootstrap> bootstrap, Ending how);

}  // namespace purlin::runtime
