// The fake's collectives, point-to-point, groups and reduction operators. Nothing is
// launched: `stream` is only logged, so any value (even a made-up one) is fine.
#include <nccl.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "recorder.h"

using fake_nccl::Call;

namespace {

// The common tail of every data-moving call.
Call& buffers(Call& c, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return c.num("datatype", datatype).comm("comm", comm).ptr("stream", stream);
}

// A host-immediate scalar is read now (that is the point of ncclScalarHostImmediate), so
// the fake can log its value; device scalars stay a pointer.
std::string scalar_text(const void* scalar, ncclDataType_t type) {
  char buf[64];
  switch (type) {
    case ncclInt32: { int32_t v; std::memcpy(&v, scalar, 4); std::snprintf(buf, sizeof(buf), "%d", v); break; }
    case ncclUint32: { uint32_t v; std::memcpy(&v, scalar, 4); std::snprintf(buf, sizeof(buf), "%u", v); break; }
    case ncclInt64: { int64_t v; std::memcpy(&v, scalar, 8); std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v)); break; }
    case ncclUint64: { uint64_t v; std::memcpy(&v, scalar, 8); std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(v)); break; }
    case ncclFloat32: { float v; std::memcpy(&v, scalar, 4); std::snprintf(buf, sizeof(buf), "%g", v); break; }
    case ncclFloat64: { double v; std::memcpy(&v, scalar, 8); std::snprintf(buf, sizeof(buf), "%g", v); break; }
    default: {  // 16- and 8-bit types: the raw bits, lowest byte first
      const auto* b = static_cast<const unsigned char*>(scalar);
      size_t n = (type == ncclFloat8e4m3 || type == ncclFloat8e5m2 || type == ncclInt8 || type == ncclUint8) ? 1 : 2;
      std::snprintf(buf, sizeof(buf), "bits:%02x%02x", b[0], n > 1 ? b[1] : 0);
    }
  }
  return buf;
}

std::atomic<int> g_next_op{ncclNumOps + 10};  // distinct from the operators Purlin numbers itself

}  // namespace

extern "C" {

ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Call c("AllReduce");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count)).num("op", op);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream) {
  Call c("AllGather");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("sendcount", static_cast<long long>(sendcount));
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  Call c("ReduceScatter");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("recvcount", static_cast<long long>(recvcount));
  c.num("op", op);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  Call c("AlltoAll");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count));
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            ncclComm_t comm, cudaStream_t stream) {
  Call c("Broadcast");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count)).num("root", root);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  Call c("Bcast");
  c.ptr("buff", buff).num("count", static_cast<long long>(count)).num("root", root);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  Call c("Reduce");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count));
  c.num("op", op).num("root", root);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  Call c("Gather");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count)).num("root", root);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                          ncclComm_t comm, cudaStream_t stream) {
  Call c("Scatter");
  c.ptr("sendbuff", sendbuff).ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count)).num("root", root);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  Call c("Send");
  c.ptr("sendbuff", sendbuff).num("count", static_cast<long long>(count)).num("peer", peer);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) {
  Call c("Recv");
  c.ptr("recvbuff", recvbuff).num("count", static_cast<long long>(count)).num("peer", peer);
  return buffers(c, datatype, comm, stream).commit();
}

ncclResult_t pncclGroupStart() { return Call("GroupStart").commit(); }

ncclResult_t pncclGroupEnd() { return Call("GroupEnd").commit(); }

ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  Call c("GroupSimulateEnd");
  c.ptr("simInfo", simInfo);
  if (simInfo != nullptr) {
    c.num("simInfo.size", static_cast<long long>(simInfo->size)).num("simInfo.magic", simInfo->magic);
    c.num("simInfo.version", simInfo->version);
    if (c.ok()) simInfo->estimatedTime = 42.5f;  // distinctive: tests look for it
  }
  return c.commit();
}

ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm) {
  Call c("RedOpCreatePreMulSum");
  c.ptr("op", op).ptr("scalar", scalar).num("datatype", datatype).num("residence", residence);
  if (scalar != nullptr && residence == ncclScalarHostImmediate) {
    c.str("scalar.value", scalar_text(scalar, datatype).c_str());
  }
  c.comm("comm", comm);
  if (c.ok() && op != nullptr) c.num("out", *op = static_cast<ncclRedOp_t>(g_next_op++));
  return c.commit();
}

ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  Call c("RedOpDestroy");
  return c.num("op", op).comm("comm", comm).commit();
}

}  // extern "C"
