#include "checks.h"

#include <cstdint>
#include <mutex>

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

ncclResult_t check_op(const char* fn, ncclRedOp_t op, ncclComm* c) {
  const int v = static_cast<int>(op);
  if (v >= 0 && v < ncclNumOps) return ncclSuccess;
  std::lock_guard<std::mutex> lock(c->ops_mu);
  if (c->user_ops.count(v) != 0) return ncclSuccess;
  return fail(ncclInvalidArgument, fn, "op %d is neither a built-in ncclRedOp_t nor created on this comm", v);
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
  if (ncclResult_t r = check_type(fn, d.type); r != ncclSuccess) return r;
  const int nranks = d.comm->nranks;
  const bool p2p = d.kind == OpKind::kSend || d.kind == OpKind::kRecv;
  BufferUse use{};
  if (!buffer_use(d, d.comm->rank, nranks, &use))
    return fail(ncclInvalidArgument, fn, "count %zu times nranks %d overflows", d.count, nranks);
  if (use.has_root) {
    if (ncclResult_t r = check_rank(fn, p2p ? "peer" : "root", d.root, nranks); r != ncclSuccess) return r;
  }
  if (use.reduces) {
    if (ncclResult_t r = check_op(fn, d.op, d.comm); r != ncclSuccess) return r;
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
