#include "runtime/peer_memory.h"

#include <sys/random.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <random>

#include "base/log.h"
#include "runtime/cuda_check.h"
#include "runtime/placement.h"

namespace purlin::runtime {
namespace {

std::uint64_t draw_token() {
  std::uint64_t t = 0;
  if (getrandom(&t, sizeof(t), 0) == static_cast<ssize_t>(sizeof(t)) && t != 0) return t;
  // getrandom unavailable (old kernel, seccomp): random_device, salted with the pid and the
  // clock so that two processes still differ if it is deterministic.
  std::random_device rd;
  t = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  t ^= static_cast<std::uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull;
  t ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return t == 0 ? 1 : t;
}

}  // namespace

std::uint64_t process_token() {
  // Keyed by pid so that a forked child, which inherits this memory, draws its own: it is
  // another address space and must map its parent's blocks through IPC.
  static std::mutex mu;
  static pid_t owner = -1;
  static std::uint64_t token = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (owner != getpid()) {
    owner = getpid();
    token = draw_token();
  }
  return token;
}

PeerMappings::~PeerMappings() { close(); }

ncclResult_t PeerMappings::open(const std::vector<PeerRecord>& records, int rank) {
  rank_ = rank;
  const PeerRecord& me = records[rank];
  bases_.assign(records.size(), nullptr);
  for (std::size_t r = 0; r < records.size(); ++r) {
    const PeerRecord& peer = records[r];
    switch (reach(me, peer)) {
      case PeerReach::own_pointer:
        bases_[r] = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(peer.block));
        continue;
      case PeerReach::peer_access: {
        // Peer access is per process and shared by every communicator, so it is enabled once
        // and never disabled.
        const cudaError_t e = cudaDeviceEnablePeerAccess(peer.device, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
          (void)cudaGetLastError();
        } else if (cuda_failed(e, rank, "cudaDeviceEnablePeerAccess")) {
          PURLIN_WARN("rank %d: cannot reach rank %zu on cudaDev %d from cudaDev %d", rank, r,
                      peer.device, me.device);
          return ncclUnhandledCudaError;
        }
        bases_[r] = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(peer.block));
        continue;
      }
      case PeerReach::unexported:
        PURLIN_WARN("rank %d: rank %zu is in another process but could not export its block "
                    "for CUDA IPC (see that rank's log)",
                    rank, r);
        return ncclUnhandledCudaError;
      case PeerReach::ipc_mapping:
        break;
    }
    void* mapped = nullptr;
    if (cuda_failed(cudaIpcOpenMemHandle(&mapped, peer.ipc, cudaIpcMemLazyEnablePeerAccess),
                    rank, "cudaIpcOpenMemHandle")) {
      PURLIN_WARN("rank %d: cannot map the block of rank %zu (cudaDev %d of another process)",
                  rank, r, peer.device);
      return ncclUnhandledCudaError;
    }
    opened_.push_back(mapped);
    bases_[r] = static_cast<std::byte*>(mapped);
  }
  return ncclSuccess;
}

void PeerMappings::close() {
  for (void* p : opened_) {
    (void)cuda_failed(cudaIpcCloseMemHandle(p), rank_, "cudaIpcCloseMemHandle");
  }
  opened_.clear();
  bases_.clear();
}

}  // namespace purlin::runtime
