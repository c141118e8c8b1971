#include "runtime/communicator.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "base/log.h"

namespace purlin::runtime {
namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// An attribute CUDA cannot report counts as absent: the pair then forwards.
bool cuda_says(cudaError_t e, int value) {
  if (e == cudaSuccess) return value != 0;
  (void)cudaGetLastError();
  return false;
}

// How `cuda_device` reaches each other GPU this process sees (GpuLink says why these facts).
void observe_links(int cuda_device, PeerInfo* me) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  int slot = 0;
  for (int d = 0; d < count && slot < kMaxGpuLinks; ++d) {
    if (d == cuda_device) continue;
    GpuLink& link = me->links[slot];
    if (cudaDeviceGetPCIBusId(link.pci_bus_id, sizeof(link.pci_bus_id), d) != cudaSuccess) {
      (void)cudaGetLastError();
      link = GpuLink{};
      continue;
    }
    int access = 0, atomics = 0;
    link.peer_access = cuda_says(cudaDeviceCanAccessPeer(&access, cuda_device, d), access);
    link.native_atomics =
        link.peer_access &&
        cuda_says(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, cuda_device, d), atomics);
    ++slot;
  }
}

PeerInfo local_info(int cuda_device) {
  PeerInfo me;
  me.host_hash = host_hash();
  me.pid = static_cast<int64_t>(getpid());
  me.cuda_device = cuda_device;
  if (cuda_device < 0) return me;
  if (cudaDeviceGetPCIBusId(me.pci_bus_id, sizeof(me.pci_bus_id), cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();
    me.pci_bus_id[0] = '\0';
  }
  observe_links(cuda_device, &me);
  return me;
}

}  // namespace

uint64_t host_hash() {
  // The boot id separates containers that share a hostname on different machines.
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string key(host);
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (boot >> boot_id) key += boot_id;
  return fnv1a(key);
}

ncclResult_t Communicator::create(const ncclUniqueId& id, int rank, int nranks, int cuda_device,
                                  std::unique_ptr<Communicator>* out) {
  auto comm = std::unique_ptr<Communicator>(new Communicator());
  std::unique_ptr<Bootstrap> bootstrap;
  ncclResult_t res = Bootstrap::create(id, rank, nranks, &bootstrap);
  if (res != ncclSuccess) return res;
  comm->bootstrap_ = std::move(bootstrap);

  comm->peers_.resize(nranks);
  comm->peers_[rank] = local_info(cuda_device);
  res = comm->bootstrap_->allgather(comm->peers_.data(), sizeof(PeerInfo));
  if (res != ncclSuccess) return res;

  const PeerInfo& me = comm->peers_[rank];
  comm->ranks_on_my_gpu_ = 0;
  for (const PeerInfo& p : comm->peers_) {
    if (p.host_hash != me.host_hash) comm->single_host_ = false;
    bool same_gpu = p.host_hash == me.host_hash &&
                    (me.pci_bus_id[0] != '\0' ? std::strcmp(p.pci_bus_id, me.pci_bus_id) == 0
                                              : p.cuda_device == me.cuda_device);
    if (same_gpu) ++comm->ranks_on_my_gpu_;
  }
  if (comm->ranks_on_my_gpu_ > 1) {
    // NCCL 2.28 refuses this; Purlin allows it (testing several ranks on one GPU).
    PURLIN_INFO(kInit, "rank %d: %d ranks share GPU %s (cudaDev %d)", rank, comm->ranks_on_my_gpu_,
                me.pci_bus_id[0] ? me.pci_bus_id : "?", me.cuda_device);
  }
  *out = std::move(comm);
  return ncclSuccess;
}

}  // namespace purlin::runtime
