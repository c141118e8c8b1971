// One description of a communication call. Every collective and point-to-point entry
// point (the NCCL ones and Purlin's V collectives) fills a Descriptor and hands it to the
// router (router.h): validation, the native-or-forward decision and group deferral happen
// in one place.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace purlin::shim {

enum class OpKind : uint8_t {
  kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kReduce, kGather, kScatter,
  kSend, kRecv,
  kPutSignal, kSignal, kWaitSignal,          // NCCL's one-sided calls (2.29)
  kAllGatherV, kReduceScatterV, kAllToAllV,  // Purlin's own (include/purlin/purlin.h)
};

// The entry point's name, e.g. "ncclAllReduce" or "purlinAllGatherV".
const char* op_kind_name(OpKind k);
bool is_v(OpKind k);
bool is_rma(OpKind k);
// Calls that Purlin's kernels run on a native communicator: the collectives and send/recv; the
// one-sided calls are always forwarded.
bool runs_native(OpKind k);
// ncclSend and ncclRecv: a group's are launched together, per communicator (native.h).
bool is_p2p(OpKind k);
// The collectives with an ncclXConfig variant (ncclAllReduceConfig ...).
bool has_config_variant(OpKind k);

// The host arrays of a V collective, copied when the call is made: the application may
// reuse its arrays as soon as the call returns, also inside a group, where the call runs
// only at ncclGroupEnd. Immutable, shared by every copy of the descriptor.
struct VArrays {
  // AllGatherV: recvcounts/displs; ReduceScatterV: sendcounts/displs; AllToAllV:
  // sendcounts/sdispls. The same on every rank except for AllToAllV.
  std::vector<size_t> in_counts;
  std::vector<size_t> in_displs;  // empty: back to back in rank order
  // AllToAllV only: recvcounts/rdispls.
  std::vector<size_t> out_counts;
  std::vector<size_t> out_displs;
  // Largest count any rank sends to any rank, identical on every rank (AllToAllV: the
  // caller's maxcount; the others: the maximum of in_counts, which every rank shares).
  size_t agreed_max = 0;
};

// Copies `nranks` entries of each non-null array. `out_counts` non-null means AllToAllV,
// whose agreed maximum is `maxcount`; otherwise it is computed from `in_counts`.
std::shared_ptr<const VArrays> copy_v_arrays(int nranks, const size_t* in_counts, const size_t* in_displs,
                                             const size_t* out_counts = nullptr,
                                             const size_t* out_displs = nullptr, size_t maxcount = 0);

// What only the one-sided calls carry, copied when the call is made (a group issues it at
// ncclGroupEnd, and ncclWaitSignal's array may be reused as soon as the call returns).
struct RmaArgs {
  ncclWindow_t peer_win = nullptr;  // ncclPutSignal
  size_t peer_win_offset = 0;       // ncclPutSignal
  int sig_idx = 0;                  // ncclPutSignal, ncclSignal
  int ctx = 0;                      // ncclPutSignal, ncclSignal
  unsigned int flags = 0;           // ncclPutSignal, ncclSignal
  std::vector<ncclWaitSignalDesc_t> waits;  // ncclWaitSignal
};

struct Descriptor {
  OpKind kind;
  const void* sendbuff;
  void* recvbuff;
  size_t count;            // elements, as the NCCL call counts them (V: sendcount / recvcount)
  ncclDataType_t type;
  ncclRedOp_t op;          // meaningful for reductions only
  int root;                // root for rooted collectives, peer for send/recv/put/signal, else -1
  ncclComm* comm;
  cudaStream_t stream;
  std::shared_ptr<const VArrays> v{};  // V collectives only
  std::shared_ptr<const RmaArgs> rma{};  // one-sided calls only
  // The caller's ncclCollConfig_t (an ncclXConfig call with a config), as read by
  // read_coll_config (coll_config.h); null for plain calls.
  std::shared_ptr<const ncclCollConfig_t> coll{};

  // A user PreMulSum op on the native path, resolved when the call is made (the
  // application may destroy the op right after the call, before a group ends): the
  // scalar's bytes (host residence) or its device address.
  std::uint64_t scalar_bits = 0;
  const void* scalar_device = nullptr;
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

// Fails (returns false) only when an element count overflows size_t (or a V descriptor
// lacks its arrays).
bool buffer_use(const Descriptor& d, int rank, int nranks, BufferUse* out);

// Elements a V partition table spans: the end of its furthest non-empty partition
// (back to back when `displs` is empty). False on overflow.
bool v_extent(const std::vector<size_t>& counts, const std::vector<size_t>& displs, size_t* out);

}  // namespace purlin::shim
