// Purlin's own entry points (include/purlin/purlin.h). They take the same path as the NCCL
// collectives: a Descriptor, validated and routed by the one router; the host arrays are
// copied into the descriptor here, since a group issues the call only at ncclGroupEnd.
// Exported by name next to the NCCL ABI (exports.map), without pncclX profiling aliases.
#include <purlin/purlin.h>

#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "router.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

// A V call's host arrays as the application passed them.
struct Tables {
  const char* in_name;         // how the WARN names in_counts
  const size_t* in_counts;
  const size_t* in_displs;
  const size_t* out_counts;    // AllToAllV only ("recvcounts")
  const size_t* out_displs;
  size_t maxcount;             // AllToAllV only
};

// The communicator must be ready before its size tells how much of each array to copy.
ncclResult_t submit_v(Descriptor d, const Tables& t) {
  const char* fn = op_kind_name(d.kind);
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, d.comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, t.in_name, t.in_counts); r != ncclSuccess) return r;
    if (d.kind == OpKind::kAllToAllV) {
      if (ncclResult_t r = check_ptr(fn, "recvcounts", t.out_counts); r != ncclSuccess) return r;
    }
    d.v = copy_v_arrays(d.comm->nranks, t.in_counts, t.in_displs, t.out_counts, t.out_displs, t.maxcount);
    return enqueue(d);
  });
}

}  // namespace

extern "C" {

ncclResult_t purlinCommIsNative(ncclComm_t comm, int* native) {
  const char* fn = "purlinCommIsNative";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "native", native); r != ncclSuccess) return r;
    *native = comm->native != nullptr ? 1 : 0;
    return ncclSuccess;
  });
}

ncclResult_t purlinAllGatherV(const void* sendbuff, size_t sendcount, void* recvbuff, const size_t* recvcounts,
                              const size_t* displs, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return submit_v({OpKind::kAllGatherV, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1, comm, stream},
                  {"recvcounts", recvcounts, displs, nullptr, nullptr, 0});
}

ncclResult_t purlinReduceScatterV(const void* sendbuff, const size_t* sendcounts, const size_t* displs,
                                  void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t stream) {
  return submit_v({OpKind::kReduceScatterV, sendbuff, recvbuff, recvcount, datatype, op, -1, comm, stream},
                  {"sendcounts", sendcounts, displs, nullptr, nullptr, 0});
}

ncclResult_t purlinAllToAllV(const void* sendbuff, const size_t* sendcounts, const size_t* sdispls, void* recvbuff,
                             const size_t* recvcounts, const size_t* rdispls, size_t maxcount,
                             ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return submit_v({OpKind::kAllToAllV, sendbuff, recvbuff, 0, datatype, ncclSum, -1, comm, stream},
                  {"sendcounts", sendcounts, sdispls, recvcounts, rdispls, maxcount});
}

}  // extern "C"
