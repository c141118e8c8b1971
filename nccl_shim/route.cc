#include "route.h"

#include <cstring>

#include "launch/call.h"

namespace purlin::shim {
namespace {

bool same_gpu(const runtime::PeerInfo& a, const runtime::PeerInfo& b) {
  if (a.pci_bus_id[0] != '\0' && b.pci_bus_id[0] != '\0') return std::strcmp(a.pci_bus_id, b.pci_bus_id) == 0;
  // Without bus ids only one process can tell: its own device numbers.
  return a.pid == b.pid && a.cuda_device == b.cuda_device;
}

// What `from` observed of the GPU with `bus_id`, or nullptr when its process does not see it.
const runtime::GpuLink* observed(const runtime::PeerInfo& from, const char* bus_id) {
  for (const runtime::GpuLink& link : from.links)
    if (link.pci_bus_id[0] != '\0' && std::strcmp(link.pci_bus_id, bus_id) == 0) return &link;
  return nullptr;
}

GpuPair classify(const runtime::GpuLink& link) {
  if (link.peer_access == 0) return GpuPair::kNoPeerAccess;
  return link.native_atomics != 0 ? GpuPair::kNvlink : GpuPair::kPcieOnly;
}

// The weaker of two answers (GpuPair lists them from the best to the worst).
GpuPair weaker(GpuPair x, GpuPair y) { return static_cast<uint8_t>(x) > static_cast<uint8_t>(y) ? x : y; }

std::string pair_reason(const RouteFacts& f) {
  const std::string pair = "ranks " + std::to_string(f.pair_a) + " and " + std::to_string(f.pair_b);
  switch (f.pair) {
    case GpuPair::kNoPeerAccess: return pair + " have no peer access between their GPUs";
    case GpuPair::kPcieOnly:
      return pair + " reach each other's GPU over PCIe only (peer access without native atomics: no NVLink)";
    case GpuPair::kUnknown:
      return pair + ": peer access between their GPUs is unknown (neither process sees the other's GPU)";
    case GpuPair::kSameGpu:
    case GpuPair::kNvlink: break;
  }
  return pair;
}

}  // namespace

GpuPair gpu_pair(const runtime::PeerInfo& a, const runtime::PeerInfo& b) {
  if (same_gpu(a, b)) return GpuPair::kSameGpu;
  if (a.pci_bus_id[0] == '\0' || b.pci_bus_id[0] == '\0') return GpuPair::kUnknown;
  const runtime::GpuLink* ab = observed(a, b.pci_bus_id);
  const runtime::GpuLink* ba = observed(b, a.pci_bus_id);
  if (ab == nullptr && ba == nullptr) return GpuPair::kUnknown;
  if (ab == nullptr) return classify(*ba);
  if (ba == nullptr) return classify(*ab);
  return weaker(classify(*ab), classify(*ba));
}

RouteFacts route_facts(std::int64_t native_env, bool single_host,
                       const std::vector<runtime::PeerInfo>& peers) {
  RouteFacts f;
  f.native_env = native_env;
  f.single_host = single_host;
  f.nranks = static_cast<int>(peers.size());
  for (size_t r = 0; r < peers.size(); ++r) {
    if (peers[r].cuda_device < 0) {
      f.first_rank_without_gpu = static_cast<int>(r);
      break;
    }
  }
  // Bus ids name GPUs within one host only; several hosts forward anyway.
  if (!single_host || f.first_rank_without_gpu >= 0) return f;
  for (int a = 0; a < f.nranks; ++a) {
    for (int b = a + 1; b < f.nranks; ++b) {
      const GpuPair p = gpu_pair(peers[a], peers[b]);
      if (p == GpuPair::kSameGpu || p == GpuPair::kNvlink) continue;
      f.pair_a = a;
      f.pair_b = b;
      f.pair = p;
      return f;
    }
  }
  return f;
}

Route decide_route(const RouteFacts& f, std::string* reason) {
  if (f.native_env == 0) {
    *reason = "PURLIN_NATIVE=0: everything goes to NCCL";
    return Route::kForward;
  }
  if (!f.single_host) {
    *reason = "ranks span several hosts (more than one NVLink domain): everything goes to NCCL";
    return Route::kForward;
  }
  if (f.first_rank_without_gpu >= 0) {
    *reason = "rank " + std::to_string(f.first_rank_without_gpu) + " has no GPU: everything goes to NCCL";
    return Route::kForward;
  }
  if (f.pair_a >= 0) {
    // Native kernels need every pair of ranks to be one GPU or NVLink peers (runtime::GpuLink).
    *reason = pair_reason(f) + ": everything goes to NCCL";
    return Route::kForward;
  }
  if (f.nranks > launch::kMaxRanks) {
    // V partition tables travel in the kernel parameters, sized for kMaxRanks.
    *reason = std::to_string(f.nranks) + " ranks exceed the native limit of " + std::to_string(launch::kMaxRanks) +
              ": everything goes to NCCL";
    return Route::kForward;
  }
  *reason = "one host, a GPU per rank, every pair of GPUs the same or NVLink peers: collectives and send/recv run on "
            "Purlin's kernels";
  return Route::kNative;
}

}  // namespace purlin::shim
