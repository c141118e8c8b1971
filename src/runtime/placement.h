// Where a communicator's ranks run relative to each other (which process, which GPU), and what
// follows from it: how a rank reaches each peer's block, whether application buffers are
// visible across ranks, which memory scope the kernels use, and the facts the policy is
// selected from. Pure functions of the exchanged PeerRecords, so every rank derives the same
// answers, and the host tests can check placements (one rank per GPU, several GPUs in one
// process, MPS) that the CI machine does not have.
#pragma once

#include <vector>

#include "policy/policy.h"
#include "runtime/peer_memory.h"

namespace purlin::runtime {

// How one rank reaches a peer's peer-visible block.
enum class PeerReach {
  own_pointer,  // same process, same GPU: the owner's pointer as is
  peer_access,  // same process, another GPU: the owner's pointer once peer access is enabled
  ipc_mapping,  // another process (also on the same GPU, under MPS): a CUDA IPC mapping
  unexported,   // another process, but the owner could not export its block
};
PeerReach reach(const PeerRecord& me, const PeerRecord& peer);

// Whether two ranks share an address space and a GPU.
bool same_process_and_gpu(const PeerRecord& a, const PeerRecord& b);

// Whether every rank's application buffers are readable by every rank at the address the owner
// uses (snac::Handle::inputs_peer_visible), which is also when the kernels' memory operations
// may use GPU scope: one process and one GPU. One process on several GPUs shares addresses too,
// but peer access covers cudaMalloc memory only, not allocations mapped with cuMemMap
// (PyTorch's expandable segments) unless they granted access to every GPU; and ranks on
// different GPUs or in different processes order their memory operations at system scope.
bool one_address_space_and_gpu(const std::vector<PeerRecord>& records);

// The most constraining facts over all ranks, so that every rank selects the same policy and
// the co-residency budget holds on the most crowded GPU.
policy::Facts agreed_facts(const std::vector<PeerRecord>& records);

// The ranks of `rank`'s process on `rank`'s GPU (itself included) and the lowest of them.
struct GpuShare {
  int ranks = 0;
  int first = 0;
};
GpuShare process_share_of_gpu(const std::vector<PeerRecord>& records, int rank);

}  // namespace purlin::runtime
