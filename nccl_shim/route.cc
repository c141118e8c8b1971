#include "route.h"

#include "launch/call.h"

namespace purlin::shim {

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
  if (f.nranks > launch::kMaxRanks) {
    // V partition tables travel in the kernel parameters, sized for kMaxRanks.
    *reason = std::to_string(f.nranks) + " ranks exceed the native limit of " + std::to_string(launch::kMaxRanks) +
              ": everything goes to NCCL";
    return Route::kForward;
  }
  *reason = "one host, a GPU per rank: collectives run on Purlin's kernels, send/recv go to NCCL";
  return Route::kNative;
}

}  // namespace purlin::shim
