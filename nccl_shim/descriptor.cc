#include "descriptor.h"

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
  }
  return "nccl?";
}

bool buffer_use(const Descriptor& d, int rank, int nranks, BufferUse* out) {
  const size_t n = d.count;
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
  }
  return true;
}

}  // namespace purlin::shim
