// One description of a communication call. Every collective and point-to-point entry
// point fills a Descriptor and hands it to the router (router.h): validation, the
// native-or-forward decision and group deferral happen in one place.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace purlin::shim {

enum class OpKind : uint8_t {
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kGather, kScatter,
  kSend, kRecv,
};

const char* op_kind_name(OpKind k);  // the NCCL entry point's name, e.g. "ncclAllReduce"

struct Descriptor {
  OpKind kind;
  const void* sendbuff;
  void* recvbuff;
  size_t count;            // elements, as the NCCL call counts them
  ncclDataType_t type;
  ncclRedOp_t op;          // meaningful for reductions only
  int root;                // root for rooted collectives, peer for send/recv, else -1
  ncclComm* comm;
  cudaStream_t stream;
};

// Which buffers a call reads/writes on this rank, and how many elements each holds;
// derived from the NCCL semantics of each collective, used by validation.
struct BufferUse {
  bool reads_send;
  bool writes_recv;
  size_t send_elems;
  size_t recv_elems;
  bool reduces;    // the op argument is meaningful
  bool has_root;   // root (or peer) argument is meaningful
};

// Fails (returns false) only when an element count overflows size_t.
bool buffer_use(const Descriptor& d, int rank, int nranks, BufferUse* out);

}  // namespace purlin::shim
