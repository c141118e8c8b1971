// NCCL group semantics: ncclGroupStart/End nest; inside a group, communicator creation
// and communication calls are recorded and carried out at the outermost ncclGroupEnd.
//
// At that point every recorded init runs in its own thread, because one application
// thread may create several ranks of one communicator (nccl-tests does), and each rank's
// rendezvous blocks until all ranks arrive.
#pragma once

#include <nccl.h>

#include <functional>

#include "descriptor.h"

namespace purlin::shim {

// An init (or split/shrink) of one communicator: runs the rendezvous, sets c->state.
using InitJob = std::function<ncclResult_t()>;

bool in_group();
ncclResult_t group_start();
// `sim` non-null: ncclGroupSimulateEnd (ops are estimated by the real NCCL, not run).
// `fn`, the entry point that ends the group, names its failures; a string literal, since
// a nonblocking group's background thread outlives the call.
ncclResult_t group_end(const char* fn, ncclSimInfo_t* sim);

// Outside a group: runs the job now (blocking) or in the background (nonblocking comm,
// returns ncclInProgress). Inside a group: records it for ncclGroupEnd. `fn`, the entry
// point, names the failures of the job's thread; a string literal, since it outlives the call.
ncclResult_t submit_init(const char* fn, ncclComm* c, InitJob job);

// Forgets the init of `c` recorded in this thread's open group, if any: for a creation
// that fails before its group ends.
void cancel_init(const ncclComm* c);

// Records a validated (for `native`: prepared) communication call for ncclGroupEnd.
// Native calls are issued first: collectives in recorded order, each an independent kernel on
// its stream, then each communicator's sends and receives as one launch; then the forwarded
// ones, inside one real-NCCL group.
void defer_op(const Descriptor& d, bool native);

}  // namespace purlin::shim
