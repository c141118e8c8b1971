#include "checks.h"

#include <cstdint>
#include <optional>

#include "comm.h"
#include "errors.h"

namespace purlin::shim {

size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
  }
}

ncclResult_t check_type(const char* fn, ncclDataType_t t) {
  if (type_size(t) == 0)
    return fail(ncclInvalidArgument, fn, "datatype %d is not a valid ncclDataType_t", static_cast<int>(t));
  return ncclSuccess;
}

ncclResult_t check_ptr(const char* fn, const char* name, const void* p) {
  if (p == nullptr) return fail(ncclInvalidArgument, fn, "%s is NULL", name);
  return ncclSuccess;
}

ncclResult_t check_rank(const char* fn, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks)
    return fail(ncclInvalidArgument, fn, "%s %d is out of range [0, %d)", name, value, nranks);
  return ncclSuccess;
}

namespace {

// A built-in op, or one created on this communicator for the call's datatype (NCCL ties a
// PreMulSum operator to the datatype of its scalar).
ncclResult_t check_op(const char* fn, ncclRedOp_t op, ncclDataType_t type, const ncclComm* c) {
  const int v = static_cast<int>(op);
  if (v >= 0 && v < ncclNumOps) return ncclSuccess;
  std::optional<UserOp> user = c->user_ops.find(op);
  if (!user) return fail(ncclInvalidArgument, fn, "op %d is neither a built-in ncclRedOp_t nor created on this comm", v);
  if (user->type != type)
    return fail(ncclInvalidArgument, fn, "op %d was created for datatype %d, the call uses datatype %d", v,
                static_cast<int>(user->type), static_cast<int>(type));
  return ncclSuccess;
}

// Element offset of partition k: its displacement, or back to back when there are none.
size_t displacement(const std::vector<size_t>& displs, const std::vector<size_t>& counts, size_t k) {
  if (!displs.empty()) return displs[k];
  size_t at = 0;
  for (size_t j = 0; j < k; ++j) at += counts[j];
  return at;
}

// What only the V collectives' tables can get wrong on one rank (what must agree across
// ranks cannot be checked without communicating).
ncclResult_t check_v(const char* fn, const Descriptor& d) {
  const int me = d.comm->rank;
  const VArrays& v = *d.v;
  switch (d.kind) {
    case OpKind::kAllGatherV:
      if (d.count != v.in_counts[me])
        return fail(ncclInvalidArgument, fn, "sendcount %zu differs from recvcounts[%d] = %zu", d.count, me,
                    v.in_counts[me]);
      break;
    case OpKind::kReduceScatterV:
      if (d.count != v.in_counts[me])
        return fail(ncclInvalidArgument, fn, "recvcount %zu differs from sendcounts[%d] = %zu", d.count, me,
                    v.in_counts[me]);
      break;
    case OpKind::kAllToAllV:
      for (size_t k = 0; k < v.in_counts.size(); ++k)
        if (v.in_counts[k] > v.agreed_max)
          return fail(ncclInvalidArgument, fn, "maxcount %zu is smaller than sendcounts[%zu] = %zu", v.agreed_max,
                      k, v.in_counts[k]);
      // In place, what arrives from rank k replaces what goes to rank k: the partitions must match.
      if (d.sendbuff != nullptr && d.sendbuff == d.recvbuff) {
        for (size_t k = 0; k < v.in_counts.size(); ++k) {
          if (v.in_counts[k] == 0 && v.out_counts[k] == 0) continue;
          if (v.in_counts[k] != v.out_counts[k])
            return fail(ncclInvalidArgument, fn, "in place (recvbuff == sendbuff) recvcounts[%zu] = %zu must equal "
                        "sendcounts[%zu] = %zu", k, v.out_counts[k], k, v.in_counts[k]);
          if (displacement(v.in_displs, v.in_counts, k) != displacement(v.out_displs, v.out_counts, k))
            return fail(ncclInvalidArgument, fn, "in place (recvbuff == sendbuff) rdispls[%zu] must equal sdispls[%zu]",
                        k, k);
        }
      }
      break;
    default:
      break;
  }
  return ncclSuccess;
}

ncclResult_t check_buffer(const char* fn, const char* name, const void* p, size_t elems,
                          size_t elem_bytes) {
  if (elems > SIZE_MAX / elem_bytes)
    return fail(ncclInvalidArgument, fn, "count %zu overflows the size of %s", elems, name);
  if (elems != 0 && p == nullptr)
    return fail(ncclInvalidArgument, fn, "%s is NULL with %zu elements to access", name, elems);
  return ncclSuccess;
}

}  // namespace

ncclResult_t check_descriptor(const Descriptor& d) {
  const char* fn = op_kind_name(d.kind);
  if (ncclResult_t r = check_ready(fn, d.comm); r != ncclSuccess) return r;
  if (d.comm->finalized.load(std::memory_order_acquire))
    return fail(ncclInvalidUsage, fn, "comm %p was finalized (ncclCommFinalize); only ncclCommDestroy may follow",
                static_cast<const void*>(d.comm));
  if (ncclResult_t r = check_type(fn, d.type); r != ncclSuccess) return r;
  const int nranks = d.comm->nranks;
  const bool p2p = d.kind == OpKind::kSend || d.kind == OpKind::kRecv || is_rma(d.kind);
  BufferUse use{};
  if (!buffer_use(d, d.comm->rank, nranks, &use)) {
    if (is_v(d.kind))
      return fail(ncclInvalidArgument, fn, "%s and their displacements overflow size_t",
                  d.kind == OpKind::kAllGatherV ? "recvcounts" : "sendcounts/recvcounts");
    return fail(ncclInvalidArgument, fn, "count %zu times nranks %d overflows", d.count, nranks);
  }
  if (use.has_root) {
    if (ncclResult_t r = check_rank(fn, p2p ? "peer" : "root", d.root, nranks); r != ncclSuccess) return r;
  }
  if (use.reduces) {
    if (ncclResult_t r = check_op(fn, d.op, d.type, d.comm); r != ncclSuccess) return r;
  }
  if (is_v(d.kind)) {
    if (ncclResult_t r = check_v(fn, d); r != ncclSuccess) return r;
  }
  if (d.kind == OpKind::kWaitSignal) {
    for (size_t i = 0; i < d.rma->waits.size(); ++i) {
      if (ncclResult_t r = check_rank(fn, "signalDescs[i].peer", d.rma->waits[i].peer, nranks); r != ncclSuccess)
        return r;
    }
  }
  const size_t es = type_size(d.type);
  if (use.reads_send) {
    if (ncclResult_t r = check_buffer(fn, "sendbuff", d.sendbuff, use.send_elems, es); r != ncclSuccess) return r;
  }
  if (use.writes_recv) {
    if (ncclResult_t r = check_buffer(fn, "recvbuff", d.recvbuff, use.recv_elems, es); r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

}  // namespace purlin::shim
