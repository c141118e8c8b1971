// The communicator-wide routing decision: native (Purlin's kernels) or forwarded (the real
// NCCL). Every rank must reach the same verdict without talking to the others, so it is a
// pure function of facts every rank holds identically after init: the allgathered peer
// table, the communicator size, and PURLIN_NATIVE, which must therefore be set the same
// way on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/communicator.h"

namespace purlin::shim {

enum class Route : uint8_t { kNative, kForward };

// How the GPUs of two ranks reach each other, from what the two ranks observed
// (runtime::GpuLink says which facts and why); from the best answer to the worst.
enum class GpuPair : uint8_t {
  kSameGpu,       // one physical GPU: nothing crosses a link
  kNvlink,        // peer access with native atomics
  kPcieOnly,      // peer access without native atomics
  kNoPeerAccess,  // CUDA reports no peer access
  kUnknown,       // neither rank's process sees the other's GPU, or a GPU has no PCI bus id
};

// `a` and `b` share a host. One rank's observation serves for both directions when the
// other's process cannot see its GPU (peer access is symmetric on NVLink and on PCIe); when
// both observed, the weaker answer counts.
GpuPair gpu_pair(const runtime::PeerInfo& a, const runtime::PeerInfo& b);

struct RouteFacts {
  std::int64_t native_env = 1;     // PURLIN_NATIVE; 0 forwards everything
  bool single_host = true;         // one OS instance: the precondition for one NVLink domain
  int first_rank_without_gpu = -1; // -1: every rank drives a GPU
  int nranks = 1;
  // The first pair of ranks (in rank order) whose GPUs are neither one GPU nor NVLink peers;
  // -1 when every pair is (or when an earlier fact decides already).
  int pair_a = -1;
  int pair_b = -1;
  GpuPair pair = GpuPair::kNvlink;
};

RouteFacts route_facts(std::int64_t native_env, bool single_host,
                       const std::vector<runtime::PeerInfo>& peers);

// The verdict and a one-line reason for the INFO line at init.
Route decide_route(const RouteFacts& facts, std::string* reason);

}  // namespace purlin::shim
