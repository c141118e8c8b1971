// Collective and point-to-point entry points: each fills a Descriptor for the router.
// Every ncclX is a weak alias of pncclX (as in NCCL), so profilers can interpose.
#include <nccl.h>

#include "errors.h"
#include "export.h"
#include "router.h"

namespace {

using purlin::shim::Descriptor;
using purlin::shim::guarded;
using purlin::shim::OpKind;
using purlin::shim::submit;

}  // namespace

extern "C" {

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, -1, comm, stream});
}

ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1, comm, stream});
}

ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1, comm, stream});
}

ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kAllToAll, sendbuff, recvbuff, count, datatype, ncclSum, -1, comm, stream});
}

ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                            int root, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

// The legacy in-place broadcast is a Broadcast whose send and receive buffers coincide. Its
// own guard names ncclBcast when its body fails; argument WARNs name the Broadcast it is.
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  return guarded("ncclBcast",
                 [&] { return submit({OpKind::kBroadcast, buff, buff, count, datatype, ncclSum, root, comm, stream}); });
}

ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream});
}

ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                         int root, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kGather, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          int root, ncclComm_t comm, cudaStream_t stream) {
  return submit({OpKind::kScatter, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  return submit({OpKind::kSend, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream});
}

ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  return submit({OpKind::kRecv, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream});
}

ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclAllReduce);
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclAllGather);
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclReduceScatter);
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclAlltoAll);
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclBroadcast);
ncclResult_t ncclBcast(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclBcast);
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclReduce);
ncclResult_t ncclGather(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclGather);
ncclResult_t ncclScatter(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclScatter);
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclSend);
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclRecv);

}  // extern "C"
