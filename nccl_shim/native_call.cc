#include "native_call.h"

#include <cuda_runtime.h>

#include "errors.h"

namespace purlin::shim {
namespace {

launch::Collective collective_of(OpKind k) {
  using launch::Collective;
  switch (k) {
    case OpKind::kAllReduce: return Collective::all_reduce;
    case OpKind::kAllGather: return Collective::all_gather;
    case OpKind::kReduceScatter: return Collective::reduce_scatter;
    case OpKind::kAllToAll: return Collective::all_to_all;
    case OpKind::kBroadcast: return Collective::broadcast;
    case OpKind::kReduce: return Collective::reduce;
    case OpKind::kGather: return Collective::gather;
    case OpKind::kScatter: return Collective::scatter;
    case OpKind::kAllGatherV: return Collective::all_gather_v;
    case OpKind::kReduceScatterV: return Collective::reduce_scatter_v;
    case OpKind::kAllToAllV: return Collective::all_to_all_v;
    case OpKind::kSend:
    case OpKind::kRecv:
    case OpKind::kPutSignal:
    case OpKind::kSignal:
    case OpKind::kWaitSignal: break;  // never here: send/recv launch as pairs (native.h), the one-sided calls forward
  }
  return Collective::all_reduce;
}

const std::size_t* or_null(const std::vector<size_t>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

bool moves_nothing(const Descriptor& d, int nranks) {
  // With one rank every collective's only region is input region 0 = output region 0, which
  // lies at the same address in place (launch/args.h: local_copy). A V collective's
  // displacements may still move it, and its tables are not consulted here. An ncclXConfig
  // call keeps its path: its config may ask for a launch-completion event (coll_config.h).
  return nranks == 1 && !is_v(d.kind) && d.coll == nullptr && d.sendbuff == d.recvbuff &&
         static_cast<int>(d.op) < ncclNumOps;
}

launch::Call to_call(const Descriptor& d) {
  launch::Call c;
  c.collective = collective_of(d.kind);
  c.type = static_cast<int>(d.type);
  // Built-in ops keep their value (ncclSum..ncclAvg = 0..4 is the order of atom::ReduceOps).
  const int op = static_cast<int>(d.op);
  c.op = op < ncclNumOps ? op : launch::kPreMulSum;
  c.input = d.sendbuff;
  c.output = d.recvbuff;
  // NCCL's count is what call.h expects for every fixed collective (per rank for
  // AllGather/ReduceScatter/AllToAll/Gather/Scatter, the whole buffer for AllReduce,
  // Broadcast, Reduce); the V collectives read their tables instead.
  c.count = d.count;
  if (d.v != nullptr) {
    c.in = {or_null(d.v->in_counts), or_null(d.v->in_displs)};
    c.out = {or_null(d.v->out_counts), or_null(d.v->out_displs)};
    c.agreed_max = d.v->agreed_max;
  }
  c.root = d.root >= 0 ? d.root : 0;
  c.scalar_bits = d.scalar_bits;
  c.scalar_device = d.scalar_device;
  c.stream = d.stream;
  return c;
}

ncclResult_t launch_result(const char* fn, const launch::Result& r) {
  using snac::Status;
  switch (r.status) {
    case Status::ok:
      break;
    case Status::bad_argument:
      return fail(ncclInvalidArgument, fn, "the native path rejects %s", r.what[0] ? r.what : "an argument");
    case Status::staging_too_small:
    case Status::too_many_workers:
    case Status::bad_policy:
      return fail(ncclInvalidUsage, fn, "the native communicator cannot serve this call: %s%s%s (see PURLIN_STAGING_BYTES, PURLIN_ROLES)",
                  snac::to_string(r.status), r.what[0] ? ": " : "", r.what);
    case Status::aborted:
      return fail(ncclSystemError, fn, "the native communicator was aborted%s%s", r.what[0] ? ": " : "", r.what);
    case Status::mismatch:  // a kernel's verdict, reported asynchronously; not a launch's
      return fail(ncclSystemError, fn, "%s%s%s", snac::to_string(r.status), r.what[0] ? ": " : "", r.what);
  }
  if (r.cuda != cudaSuccess)
    return fail(ncclUnhandledCudaError, fn, "native kernel launch failed: %s (%s)", cudaGetErrorString(r.cuda),
                cudaGetErrorName(r.cuda));
  return ncclSuccess;
}

}  // namespace purlin::shim
