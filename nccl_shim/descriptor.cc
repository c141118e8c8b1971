#include "descriptor.h"

#include <algorithm>
#include <cstdint>

namespace purlin::shim {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::kAllReduce: return "ncclAllReduce";
    case OpKind::kAllGather: return "ncclAllGather";
    case OpKind::kReduceScatter: return "ncclReduceScatter";
    case OpKind::kAllToAll: return "ncclAlltoAll";
    case OpKind::kBroadcast: return "ncclBroadcast";
    case OpKind::kReduce: return "ncclReduce";
    case OpKind::kGather: return "ncclGather";
    case OpKind::kScatter: return "ncclScatter";
    case OpKind::kSend: return "ncclSend";
    case OpKind::kRecv: return "ncclRecv";
    case OpKind::kPutSignal: return "ncclPutSignal";
    case OpKind::kSignal: return "ncclSignal";
    case OpKind::kWaitSignal: return "ncclWaitSignal";
    case OpKind::kAllGatherV: return "purlinAllGatherV";
    case OpKind::kReduceScatterV: return "purlinReduceScatterV";
    case OpKind::kAllToAllV: return "purlinAllToAllV";
  }
  return "nccl?";
}

bool is_v(OpKind k) {
  return k == OpKind::kAllGatherV || k == OpKind::kReduceScatterV || k == OpKind::kAllToAllV;
}

bool is_rma(OpKind k) { return k == OpKind::kPutSignal || k == OpKind::kSignal || k == OpKind::kWaitSignal; }

bool runs_native(OpKind k) { return !is_rma(k); }

bool is_p2p(OpKind k) { return k == OpKind::kSend || k == OpKind::kRecv; }

bool has_config_variant(OpKind k) {
  return k != OpKind::kSend && k != OpKind::kRecv && !is_rma(k) && !is_v(k);
}

std::shared_ptr<const VArrays> copy_v_arrays(int nranks, const size_t* in_counts, const size_t* in_displs,
                                             const size_t* out_counts, const size_t* out_displs,
                                             size_t maxcount) {
  const auto n = static_cast<size_t>(nranks);
  auto v = std::make_shared<VArrays>();
  auto copy = [n](const size_t* src, std::vector<size_t>* dst) {
    if (src != nullptr) dst->assign(src, src + n);
  };
  copy(in_counts, &v->in_counts);
  copy(in_displs, &v->in_displs);
  copy(out_counts, &v->out_counts);
  copy(out_displs, &v->out_displs);
  if (out_counts != nullptr) {
    v->agreed_max = maxcount;
  } else if (!v->in_counts.empty()) {
    v->agreed_max = *std::max_element(v->in_counts.begin(), v->in_counts.end());
  }
  return v;
}

bool v_extent(const std::vector<size_t>& counts, const std::vector<size_t>& displs, size_t* out) {
  size_t end = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    if (displs.empty()) {
      if (counts[k] > SIZE_MAX - end) return false;
      end += counts[k];
    } else if (counts[k] != 0) {
      if (counts[k] > SIZE_MAX - displs[k]) return false;
      end = std::max(end, displs[k] + counts[k]);
    }
  }
  *out = end;
  return true;
}

bool buffer_use(const Descriptor& d, int rank, int nranks, BufferUse* out) {
  const size_t n = d.count;
  if (is_v(d.kind)) {
    size_t in = 0, vout = 0;
    if (d.v == nullptr || !v_extent(d.v->in_counts, d.v->in_displs, &in) ||
        !v_extent(d.v->out_counts, d.v->out_displs, &vout))
      return false;
    switch (d.kind) {
      case OpKind::kAllGatherV: *out = {true, true, n, in, false, false}; break;
      case OpKind::kReduceScatterV: *out = {true, true, in, n, true, false}; break;
      default: *out = {true, true, in, vout, false, false}; break;  // AllToAllV
    }
    return true;
  }
  const auto u = static_cast<size_t>(nranks);
  if (u != 0 && n > SIZE_MAX / u) return false;  // the n * nranks sides below
  const size_t all = n * u;
  const bool root = d.root == rank;
  switch (d.kind) {
    case OpKind::kAllReduce: *out = {true, true, n, n, true, false}; break;
    case OpKind::kAllGather: *out = {true, true, n, all, false, false}; break;
    case OpKind::kReduceScatter: *out = {true, true, all, n, true, false}; break;
    case OpKind::kAllToAll: *out = {true, true, all, all, false, false}; break;
    case OpKind::kBroadcast: *out = {root, true, root ? n : 0, n, false, true}; break;
    case OpKind::kReduce: *out = {true, root, n, root ? n : 0, true, true}; break;
    case OpKind::kGather: *out = {true, root, n, root ? all : 0, false, true}; break;
    case OpKind::kScatter: *out = {root, true, root ? all : 0, n, false, true}; break;
    case OpKind::kSend: *out = {true, false, n, 0, false, true}; break;
    case OpKind::kRecv: *out = {false, true, 0, n, false, true}; break;
    // Into the peer's window, which only the peer can check.
    case OpKind::kPutSignal: *out = {true, false, n, 0, false, true}; break;
    case OpKind::kSignal: *out = {false, false, 0, 0, false, true}; break;
    case OpKind::kWaitSignal: *out = {false, false, 0, 0, false, false}; break;
    default: return false;  // the V kinds, handled above
  }
  return true;
}

}  // namespace purlin::shim
