// How a rank reaches its peers' peer-visible blocks (DESIGN §5, peer memory): a record per
// rank exchanged over the bootstrap, then, per peer, the block's own pointer (same process;
// peer access enabled when the peer runs on another GPU) or a CUDA IPC mapping (another
// process, including another process on the same GPU under MPS).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace purlin::runtime {

// A random 64-bit number drawn once per process (again after fork). Equal tokens mean the same
// address space: PIDs cannot tell, since two containers' PID namespaces may reuse a PID.
std::uint64_t process_token();

// What one rank tells every other about its block. Plain bytes on the wire (bootstrap
// allgather), so fixed-width fields only.
struct PeerRecord {
  std::uint64_t token = 0;      // process_token() of the owner
  std::int32_t device = -1;     // CUDA ordinal in the owner's process
  std::int32_t ok = 0;          // 0: the owner failed before the exchange; everyone gives up
  std::uint64_t block = 0;      // the block's device address in the owner's process
  cudaIpcMemHandle_t ipc{};     // the same block for other processes
  // Geometry every rank must agree on, since a peer's sub-buffers are found by offset.
  std::uint64_t staging_bytes = 0;
  std::uint64_t packet_capacity = 0;
  std::uint32_t slots = 0;
  std::uint32_t pair_slots = 0;
  std::uint32_t pair_packet_slots = 0;
  std::uint64_t pair_chunk_bytes = 0;
  std::uint64_t pair_packet_bytes = 0;
  // Facts the policy is selected from; ranks agree on the most constraining ones.
  std::int32_t sm_major = 0;
  std::int32_t sm_count = 0;
  std::int32_t ranks_on_gpu = 0;
  std::int32_t exported = 0;  // 0: cudaIpcGetMemHandle failed; only same-process peers can map
  std::int32_t reserved = 0;
};

// The blocks of every rank, valid in this process. Owns the IPC mappings it opened.
class PeerMappings {
 public:
  PeerMappings() = default;
  ~PeerMappings();
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  // Maps every rank's block from `records` (indexed by rank) for `rank`, whose device is
  // current. ncclUnhandledCudaError (one WARN naming the call and the peer) on failure; the
  // mappings opened so far stay owned and are closed by close().
  ncclResult_t open(const std::vector<PeerRecord>& records, int rank);

  // Closes the IPC mappings; call with this rank's device current, after every kernel that
  // may read through them has finished. Idempotent.
  void close();

  const std::vector<std::byte*>& bases() const { return bases_; }

 private:
  int rank_ = -1;
  std::vector<std::byte*> bases_;
  std::vector<void*> opened_;  // IPC mappings to close
};

}  // namespace purlin::runtime
