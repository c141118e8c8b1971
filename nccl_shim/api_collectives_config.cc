// The ncclXConfig collectives (NCCL 2.31): the plain collective's Descriptor plus the
// caller's ncclCollConfig_t, routed like the plain call (coll_config.h says when the config
// takes it to the real NCCL instead). A NULL config is the plain call, as NCCL defines it.
#include <nccl.h>

#include <cstdio>

#include "coll_config.h"
#include "errors.h"
#include "export.h"
#include "router.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

// The config is read when the call is made: a group issues the call at ncclGroupEnd. The
// name is built without allocating: nothing before the guard may throw.
ncclResult_t submit_config(Descriptor d, const ncclCollConfig_t* config) {
  char fn[64];
  std::snprintf(fn, sizeof(fn), "%sConfig", op_kind_name(d.kind));
  return guarded(fn, [&] {
    if (ncclResult_t r = read_coll_config(fn, config, &d.coll); r != ncclSuccess) return r;
    return submit(d);
  });
}

}  // namespace

extern "C" {

ncclResult_t pncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                  const ncclCollConfig_t* config) {
  return submit_config({OpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, -1, comm, stream}, config);
}

ncclResult_t pncclAllGatherConfig(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return submit_config({OpKind::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1, comm, stream},
                       config);
}

ncclResult_t pncclReduceScatterConfig(const void* sendbuff, void* recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                      const ncclCollConfig_t* config) {
  return submit_config({OpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1, comm, stream},
                       config);
}

ncclResult_t pncclAlltoAllConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return submit_config({OpKind::kAllToAll, sendbuff, recvbuff, count, datatype, ncclSum, -1, comm, stream}, config);
}

ncclResult_t pncclBroadcastConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return submit_config({OpKind::kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream},
                       config);
}

ncclResult_t pncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
                               const ncclCollConfig_t* config) {
  return submit_config({OpKind::kReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream}, config);
}

ncclResult_t pncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return submit_config({OpKind::kGather, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream}, config);
}

ncclResult_t pncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return submit_config({OpKind::kScatter, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream}, config);
}

ncclResult_t ncclAllReduceConfig(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t,
                                 const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclAllReduceConfig);
ncclResult_t ncclAllGatherConfig(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t,
                                 const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclAllGatherConfig);
ncclResult_t ncclReduceScatterConfig(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                     cudaStream_t, const ncclCollConfig_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclReduceScatterConfig);
ncclResult_t ncclAlltoAllConfig(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t,
                                const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclAlltoAllConfig);
ncclResult_t ncclBroadcastConfig(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t,
                                 const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclBroadcastConfig);
ncclResult_t ncclReduceConfig(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t,
                              const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclReduceConfig);
ncclResult_t ncclGatherConfig(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t,
                              const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclGatherConfig);
ncclResult_t ncclScatterConfig(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t,
                               const ncclCollConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclScatterConfig);

}  // extern "C"
