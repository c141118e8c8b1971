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

// How a rank's GPU reaches one other GPU that its process sees, as CUDA tells that rank.
//
// Native collectives load, store and signal through peers' memory, so they need peer access
// between the GPUs of every pair of ranks, and NVLink: Purlin's kernels are built for one
// NVLink domain, and over PCIe the real NCCL serves better. NVML, which names NVLink links,
// is not a dependency of Purlin, so NVLink is read from cudaDevP2PAttrNativeAtomicSupported:
// peers over NVLink (or NVSwitch) report native atomics, peers over PCIe, as far as we know,
// do not. Where that proxy fails, the rule still asks for what the kernels rely on: peer
// access with native atomics. cudaDevP2PAttrPerformanceRank is only a relative ranking and
// does not say what the link is.
struct GpuLink {
  char pci_bus_id[32] = {};    // the other GPU; "" marks an unused slot
  uint8_t peer_access = 0;     // cudaDeviceCanAccessPeer(this rank's GPU, that GPU)
  uint8_t native_atomics = 0;  // cudaDevP2PAttrNativeAtomicSupported between them
};

// A rank can ask CUDA only about GPUs its process sees (CUDA_VISIBLE_DEVICES may hide the
// others), and every rank must reach the same routing verdict, so each rank reports the GPUs
// it observes and every rank decides from the same allgathered table. The first 16 other GPUs
// are reported: more than any single-host NVLink domain has.
inline constexpr int kMaxGpuLinks = 16;

// What every rank tells the others at init (exchanged with one allgather).
struct PeerInfo {
  uint64_t host_hash = 0;  // hostname + boot id: ranks with equal hashes share a host
  int64_t pid = 0;
  int cuda_device = -1;    // -1: no usable GPU (e.g. CI)
  char pci_bus_id[32] = {};  // "" when unknown; equal ids mean the same physical GPU
  GpuLink links[kMaxGpuLinks] = {};  // the other GPUs this rank's process sees (none without a GPU)
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
  // For work that may outlive the communicator (runtime/teardown.h: freeing peer-visible memory
  // once every peer has left).
  std::shared_ptr<Bootstrap> share_bootstrap() { return bootstrap_; }
  MemoryRegistry& registry() { return registry_; }

  // True when all ranks run on this host: the precondition for one NVLink domain.
  bool single_host() const { return single_host_; }
  // How many ranks (this one included) drive the same physical GPU as this rank.
  int ranks_on_my_gpu() const { return ranks_on_my_gpu_; }

  void abort() { bootstrap_->abort(); }

 private:
  std::shared_ptr<Bootstrap> bootstrap_;
  std::vector<PeerInfo> peers_;
  MemoryRegistry registry_;
  bool single_host_ = true;
  int ranks_on_my_gpu_ = 1;
};

// Identifies this host; equal on every process of one OS instance.
uint64_t host_hash();

}  // namespace purlin::runtime
