// Creating communicators: the config rules, the init job every creation path shares
// (InitRank, InitRankConfig, InitAll, InitRankScalable, Split, Shrink), and the
// rank-assignment rules of split and shrink.
#pragma once

#include <nccl.h>

#include "comm.h"

namespace purlin::shim {

// Allocates a communicator in the "initializing" state for `cuda_device` with the user's
// config (or the parent's, for split/shrink with a NULL config) and makes it live.
ncclResult_t new_comm(const char* fn, int nranks, int rank, int cuda_device,
                      const ncclConfig_t* config, const ncclComm* parent, ncclComm** out);

// The rendezvous of c's rank through `id`: binds the calling thread near c's GPU,
// forms the group, logs the routing decision, publishes c->state. Runs on a Purlin thread.
ncclResult_t run_init(ncclComm* c, const ncclUniqueId& id);

// Number of visible CUDA devices (0 without a GPU or driver); read once.
int gpu_count();

// The current CUDA device, or -1 when there is none (no GPU, no driver).
int current_device();

// Frees a communicator whose blocking init failed, so the caller gets no half-made handle.
void discard_comm(ncclComm* c);

}  // namespace purlin::shim
