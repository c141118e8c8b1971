#include "cases.h"

#include <algorithm>

#include "values.h"

namespace purlin::native_test {
namespace {

using Counts = std::vector<std::size_t>;

// Back-to-back displacements (what NULL means).
Counts prefix(const Counts& counts) {
  Counts d(counts.size());
  std::size_t at = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    d[k] = at;
    at += counts[k];
  }
  return d;
}

std::size_t extent(const Counts& counts, const Counts& displs) {
  std::size_t e = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) e = std::max(e, displs[k] + counts[k]);
  return e;
}

// AllGatherV / ReduceScatterV partitions: zeros among them for every world size and seed used,
// explicit displacements leave 0-2 unused elements before each partition.
void v_partitions(const Case& c, int n, Counts* counts, Counts* displs) {
  counts->clear();
  for (int k = 0; k < n; ++k) counts->push_back(static_cast<std::size_t>((k * 7 + c.v_seed * 3) % 5) * c.count);
  if (!c.v_displs) {
    *displs = prefix(*counts);
    return;
  }
  displs->clear();
  std::size_t at = 0;
  for (int k = 0; k < n; ++k) {
    at += static_cast<std::size_t>(k % 3);
    displs->push_back(at);
    at += (*counts)[static_cast<std::size_t>(k)];
  }
}

// AllToAllV: what rank k sends rank r. The diagonal carries one extra element, so a count-0
// case still moves something and no two partitions need be equal. In place the matrix is
// symmetric (what r sends k, k sends r), so each rank's receive partitions are its send
// partitions, the only in-place AllToAllV there is; v_unequal keeps it asymmetric.
std::size_t a2av_count(const Case& c, int k, int r) {
  const int mix = c.in_place && !c.v_unequal ? (k + r) * 3 : k * 3 + r * 5;
  return static_cast<std::size_t>((mix + c.v_seed) % 4) * c.count + (k == r ? 1 : 0);
}

// Explicit AllToAllV displacements: partitions in reverse rank order with a one-element gap, so
// they are no prefix sum.
Counts a2av_displs(const Case& c, const Counts& counts) {
  if (!c.v_displs) return prefix(counts);
  Counts d(counts.size());
  std::size_t at = 0;
  for (std::size_t k = counts.size(); k-- > 0;) {
    d[k] = at;
    at += counts[k] + 1;
  }
  return d;
}

void plan_all_to_all_v(const Case& c, int n, int r, RankPlan* p) {
  std::vector<Counts> send(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < n; ++j) {
      send[static_cast<std::size_t>(k)].push_back(a2av_count(c, k, j));
      p->maxcount = std::max(p->maxcount, send[static_cast<std::size_t>(k)].back());
    }
  }
  const auto ur = static_cast<std::size_t>(r);
  p->counts = send[ur];
  p->displs = a2av_displs(c, p->counts);
  for (int k = 0; k < n; ++k) p->rcounts.push_back(send[static_cast<std::size_t>(k)][ur]);
  p->rdispls = a2av_displs(c, p->rcounts);
  p->send_elems = extent(p->counts, p->displs);
  p->recv_elems = extent(p->rcounts, p->rdispls);
  for (int k = 0; k < n; ++k) {
    const auto uk = static_cast<std::size_t>(k);
    const Counts their_displs = a2av_displs(c, send[uk]);
    p->writes.push_back({p->rdispls[uk], p->rcounts[uk], k, their_displs[ur]});
  }
}

}  // namespace

const char* coll_name(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "AllReduce";
    case Coll::kAllGather: return "AllGather";
    case Coll::kReduceScatter: return "ReduceScatter";
    case Coll::kAllToAll: return "AllToAll";
    case Coll::kBroadcast: return "Broadcast";
    case Coll::kReduce: return "Reduce";
    case Coll::kGather: return "Gather";
    case Coll::kScatter: return "Scatter";
    case Coll::kAllGatherV: return "AllGatherV";
    case Coll::kReduceScatterV: return "ReduceScatterV";
    case Coll::kAllToAllV: return "AllToAllV";
  }
  return "?";
}

const char* op_name(Op o) {
  switch (o) {
    case Op::kSum: return "sum";
    case Op::kProd: return "prod";
    case Op::kMax: return "max";
    case Op::kMin: return "min";
    case Op::kAvg: return "avg";
    case Op::kPreMulHost: return "premulsum(host)";
    case Op::kPreMulDevice: return "premulsum(device)";
  }
  return "?";
}

bool reduces(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kReduceScatter || c == Coll::kReduce || c == Coll::kReduceScatterV;
}
bool rooted(Coll c) {
  return c == Coll::kBroadcast || c == Coll::kReduce || c == Coll::kGather || c == Coll::kScatter;
}
bool variable(Coll c) {
  return c == Coll::kAllGatherV || c == Coll::kReduceScatterV || c == Coll::kAllToAllV;
}

std::string case_name(const Case& c) {
  std::string s = std::string(coll_name(c.coll)) + " " + type_name(c.type);
  if (reduces(c.coll)) s += std::string(" ") + op_name(c.op);
  s += " count=" + std::to_string(c.count);
  s += c.in_place ? " in-place" : " out-of-place";
  if (rooted(c.coll)) s += " root=" + std::to_string(c.root);
  if (c.send_shift != 0 || c.recv_shift != 0) {
    s += " shift(send+" + std::to_string(c.send_shift) + "B, recv+" + std::to_string(c.recv_shift) + "B)";
  }
  if (variable(c.coll)) {
    s += c.v_displs ? " displs=gaps" : " displs=NULL";
    s += " seed=" + std::to_string(c.v_seed);
    if (c.v_unequal) s += " unequal";
  }
  return s;
}

RankPlan plan_rank(const Case& c, int n, int r) {
  RankPlan p;
  const std::size_t cnt = c.count;
  const auto un = static_cast<std::size_t>(n);
  const auto ur = static_cast<std::size_t>(r);
  const bool root = r == c.root;
  // In place, the send data sits at send_at inside the one buffer and the output at recv_at.
  auto place = [&](std::size_t send_at, std::size_t recv_at, std::size_t buffer) {
    p.in_place = true;
    p.send_at = send_at;
    p.recv_at = recv_at;
    p.buffer_elems = buffer;
  };
  switch (c.coll) {
    case Coll::kAllReduce:
      p.send_elems = p.recv_elems = cnt;
      p.writes.push_back({0, cnt, Segment::kReduced, 0});
      if (c.in_place) place(0, 0, cnt);
      break;
    case Coll::kBroadcast:
      p.send_elems = p.recv_elems = cnt;
      p.writes.push_back({0, cnt, c.root, 0});
      if (c.in_place) place(0, 0, cnt);
      break;
    case Coll::kReduce:
      p.send_elems = p.recv_elems = cnt;
      if (root) p.writes.push_back({0, cnt, Segment::kReduced, 0});  // non-roots' recvbuff untouched
      if (c.in_place) place(0, 0, cnt);
      break;
    case Coll::kAllGather:
    case Coll::kGather:
      p.send_elems = cnt;
      p.recv_elems = cnt * un;
      if (c.coll == Coll::kAllGather || root) {
        for (int k = 0; k < n; ++k) p.writes.push_back({cnt * static_cast<std::size_t>(k), cnt, k, 0});
      }
      // Gather is in place at the root only (NCCL: recvbuff is the root's alone).
      if (c.in_place && (c.coll == Coll::kAllGather || root)) place(cnt * ur, 0, cnt * un);
      break;
    case Coll::kReduceScatter:
      p.send_elems = cnt * un;
      p.recv_elems = cnt;
      p.writes.push_back({0, cnt, Segment::kReduced, cnt * ur});
      if (c.in_place) place(0, cnt * ur, cnt * un);
      break;
    case Coll::kScatter:
      p.send_elems = cnt * un;
      p.recv_elems = cnt;
      p.writes.push_back({0, cnt, c.root, cnt * ur});
      if (c.in_place && root) place(0, cnt * ur, cnt * un);
      break;
    case Coll::kAllToAll:
      p.send_elems = p.recv_elems = cnt * un;
      if (c.in_place) place(0, 0, cnt * un);
      for (int k = 0; k < n; ++k) p.writes.push_back({cnt * static_cast<std::size_t>(k), cnt, k, cnt * ur});
      break;
    case Coll::kAllGatherV: {
      v_partitions(c, n, &p.counts, &p.displs);
      p.null_displs = !c.v_displs;
      p.send_elems = p.counts[ur];
      p.recv_elems = extent(p.counts, p.displs);
      for (int k = 0; k < n; ++k) {
        const auto uk = static_cast<std::size_t>(k);
        p.writes.push_back({p.displs[uk], p.counts[uk], k, 0});
      }
      if (c.in_place) place(p.displs[ur], 0, p.recv_elems);
      break;
    }
    case Coll::kReduceScatterV: {
      v_partitions(c, n, &p.counts, &p.displs);
      p.null_displs = !c.v_displs;
      p.send_elems = extent(p.counts, p.displs);
      p.recv_elems = p.counts[ur];
      p.writes.push_back({0, p.counts[ur], Segment::kReduced, p.displs[ur]});
      if (c.in_place) place(0, p.displs[ur], p.send_elems);
      break;
    }
    case Coll::kAllToAllV:
      p.null_displs = !c.v_displs;
      plan_all_to_all_v(c, n, r, &p);
      if (c.in_place) {
        place(0, 0, std::max(p.send_elems, p.recv_elems));
        if (c.v_unequal) {
          p.refused = true;
          p.writes.clear();
        }
      }
      break;
  }
  return p;
}

std::size_t count_for_bytes(Coll c, int nranks, std::size_t elem_bytes, std::size_t bytes) {
  const std::size_t elems = bytes / elem_bytes;
  const auto n = static_cast<std::size_t>(nranks);
  std::size_t count = elems;
  switch (c) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduce: count = elems; break;
    case Coll::kAllGather:
    case Coll::kGather:
    case Coll::kReduceScatter:
    case Coll::kAllToAll:
    case Coll::kScatter: count = elems / n; break;
    // V partitions average about two (AllGatherV / ReduceScatterV) or 1.5 (AllToAllV) scales.
    case Coll::kAllGatherV:
    case Coll::kReduceScatterV:
    case Coll::kAllToAllV: count = elems / (2 * n); break;
  }
  return count | 1;
}

}  // namespace purlin::native_test
