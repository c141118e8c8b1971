// The fake's collectives and one-sided calls of NCCL 2.29-2.32 (left out of
// libfake_nccl_228.so): the ncclXConfig collectives log what the plain ones do, under their
// own name, plus the config; nothing is launched.
#include <nccl.h>

#include <string>

#include "recorder.h"

using fake_nccl::Call;

namespace {

// The common tail of every ncclXConfig call.
ncclResult_t commit_config(Call& c, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream,
                           const ncclCollConfig_t* config) {
  c.num("datatype", datatype).comm("comm", comm).ptr("stream", stream).coll_config("config", config);
  return c.commit();
}

Call& data(Call& c, const void* sendbuff, void* recvbuff, const char* count_key, size_t count) {
  return c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num(count_key, static_cast<long long>(count));
}

}  // namespace

extern "C" {

ncclResult_t pncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                  const ncclCollConfig_t* config) {
  Call c("AllReduceConfig");
  data(c, sendbuff, recvbuff, "count", count).num("op", op);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclAllGatherConfig(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  Call c("AllGatherConfig");
  data(c, sendbuff, recvbuff, "sendcount", sendcount);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclReduceScatterConfig(const void* sendbuff, void* recvbuff, size_t recvcount,
                                      ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream,
                                      const ncclCollConfig_t* config) {
  Call c("ReduceScatterConfig");
  data(c, sendbuff, recvbuff, "recvcount", recvcount).num("op", op);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclAlltoAllConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  Call c("AlltoAllConfig");
  data(c, sendbuff, recvbuff, "count", count);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclBroadcastConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  Call c("BroadcastConfig");
  data(c, sendbuff, recvbuff, "count", count).num("root", root);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                               ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream,
                               const ncclCollConfig_t* config) {
  Call c("ReduceConfig");
  data(c, sendbuff, recvbuff, "count", count).num("op", op).num("root", root);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                               ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  Call c("GatherConfig");
  data(c, sendbuff, recvbuff, "count", count).num("root", root);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  Call c("ScatterConfig");
  data(c, sendbuff, recvbuff, "count", count).num("root", root);
  return commit_config(c, datatype, comm, stream, config);
}

ncclResult_t pncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                            ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                            ncclComm_t comm, cudaStream_t stream) {
  Call c("PutSignal");
  c.ptr("localbuff", localbuff).num("count", static_cast<long long>(count)).num("datatype", datatype);
  c.num("peer", peer).ptr("peerWin", peerWin).num("peerWinOffset", static_cast<long long>(peerWinOffset));
  c.num("sigIdx", sigIdx).num("ctx", ctx).num("flags", flags);
  return c.comm("comm", comm).ptr("stream", stream).commit();
}

ncclResult_t pncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  Call c("Signal");
  c.num("peer", peer).num("sigIdx", sigIdx).num("ctx", ctx).num("flags", flags);
  return c.comm("comm", comm).ptr("stream", stream).commit();
}

ncclResult_t pncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream) {
  Call c("WaitSignal");
  c.num("nDesc", nDesc).ptr("signalDescs", signalDescs);
  for (int i = 0; signalDescs != nullptr && i < nDesc; ++i) {
    const std::string k = "signalDescs[" + std::to_string(i) + "].";
    c.num((k + "opCnt").c_str(), signalDescs[i].opCnt).num((k + "peer").c_str(), signalDescs[i].peer);
    c.num((k + "sigIdx").c_str(), signalDescs[i].sigIdx).num((k + "ctx").c_str(), signalDescs[i].ctx);
  }
  return c.comm("comm", comm).ptr("stream", stream).commit();
}

}  // extern "C"
