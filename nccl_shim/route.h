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

struct RouteFacts {
  std::int64_t native_env = 1;     // PURLIN_NATIVE; 0 forwards everything
  bool single_host = true;         // one OS instance: the precondition for one NVLink domain
  int first_rank_without_gpu = -1; // -1: every rank drives a GPU
  int nranks = 1;
};

RouteFacts route_facts(std::int64_t native_env, bool single_host,
                       const std::vector<runtime::PeerInfo>& peers);

// The verdict and a one-line reason for the INFO line at init.
Route decide_route(const RouteFacts& facts, std::string* reason);

}  // namespace purlin::shim
