// Purlin's own communicator state: who the ranks are, where they run, and the bootstrap
// that connects them. It knows nothing about the NCCL ABI; nccl_shim wraps it.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/bootstrap/bootstrap.h"
#include "runtime/memory_registry.h"

namespace purlin::runtime {

// What every rank tells the others at init (exchanged with one allgather).
struct PeerInfo {
  uint64_t host_hash = 0;  // hostname + boot id: ranks with equal hashes share a host
  int64_t pid = 0;
  int cuda_device = -1;    // -1: no usable GPU (e.g. CI)
  char pci_bus_id[32] = {};  // "" when unknown; equal ids mean the same physical GPU
};

class Communicator {
 public:
  // Collective over all `nranks` ranks that use `id`. Blocks until the group has formed.
  static ncclResult_t create(const ncclUniqueId& id, int rank, int nranks, int cuda_device,
                             std::unique_ptr<Communicator>* out);

  int rank() const { return bootstrap_->rank(); }
  int size() const { return bootstrap_->size(); }
  int cuda_device() const { return peers_[rank()].cuda_device; }
  const std::vector<PeerInfo>& peers() const { return peers_; }
  Bootstrap& bootstrap() { return *bootstrap_; }
  MemoryRegistry& registry() { return registry_; }

  // True when all ranks run on this host: the precondition for one NVLink domain.
  bool single_host() const { return single_host_; }
  // How many ranks (this one included) drive the same physical GPU as this rank.
  int ranks_on_my_gpu() const { return ranks_on_my_gpu_; }

  void abort() { bootstrap_->abort(); }

 private:
  std::unique_ptr<Bootstrap> bootstrap_;
  std::vector<PeerInfo> peers_;
  MemoryRegistry registry_;
  bool single_host_ = true;
  int ranks_on_my_gpu_ = 1;
};

// Identifies this host; equal on every process of one OS instance.
uint64_t host_hash();

}  // namespace purlin::runtime
