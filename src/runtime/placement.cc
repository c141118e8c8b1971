#include "runtime/placement.h"

#include <algorithm>
#include <cstddef>

namespace purlin::runtime {

PeerReach reach(const PeerRecord& me, const PeerRecord& peer) {
  if (peer.token == me.token) return peer.device == me.device ? PeerReach::own_pointer : PeerReach::peer_access;
  return peer.exported != 0 ? PeerReach::ipc_mapping : PeerReach::unexported;
}

bool same_process_and_gpu(const PeerRecord& a, const PeerRecord& b) {
  return a.token == b.token && a.device == b.device;
}

bool one_address_space_and_gpu(const std::vector<PeerRecord>& records) {
  for (const PeerRecord& r : records) {
    if (!same_process_and_gpu(r, records[0])) return false;
  }
  return true;
}

policy::Facts agreed_facts(const std::vector<PeerRecord>& records) {
  policy::Facts f{records[0].sm_major, records[0].sm_count, static_cast<int>(records.size()),
                  records[0].ranks_on_gpu};
  for (const PeerRecord& r : records) {
    f.sm_major = std::min<int>(f.sm_major, r.sm_major);
    f.sm_count = std::min<int>(f.sm_count, r.sm_count);
    f.ranks_on_gpu = std::max<int>(f.ranks_on_gpu, r.ranks_on_gpu);
  }
  return f;
}

GpuShare process_share_of_gpu(const std::vector<PeerRecord>& records, int rank) {
  const PeerRecord& me = records[static_cast<std::size_t>(rank)];
  GpuShare share{0, rank};
  for (std::size_t r = 0; r < records.size(); ++r) {
    if (same_process_and_gpu(records[r], me)) {
      ++share.ranks;
      share.first = std::min(share.first, static_cast<int>(r));
    }
  }
  return share;
}

}  // namespace purlin::runtime
