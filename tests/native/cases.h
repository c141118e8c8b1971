// One collective call as a test case, and what it means for each rank: which buffers it passes,
// where they sit, and which elements the call must write with what (NCCL's definitions, written
// out with plain index arithmetic). Nothing here knows how Purlin runs a call.
#pragma once

#include <nccl.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace purlin::native_test {

enum class Coll {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kAllGatherV,
  kReduceScatterV,
  kAllToAllV,
};
inline constexpr int kColls = 11;

// The reduction ops: NCCL's built-ins, then PreMulSum with its scalar by value and in device memory.
enum class Op { kSum, kProd, kMax, kMin, kAvg, kPreMulHost, kPreMulDevice };
inline constexpr int kOps = 7;
inline constexpr std::array<Op, kOps> kAllOps = {Op::kSum, Op::kProd,       Op::kMax,         Op::kMin,
                                                 Op::kAvg, Op::kPreMulHost, Op::kPreMulDevice};

const char* coll_name(Coll c);
const char* op_name(Op o);
bool reduces(Coll c);
bool rooted(Coll c);
bool variable(Coll c);   // a V collective (purlin.h)

struct Case {
  Coll coll = Coll::kAllReduce;
  ncclDataType_t type = ncclFloat32;
  Op op = Op::kSum;
  // NCCL's count argument: the per-rank count for AllGather / ReduceScatter / AllToAll / Gather /
  // Scatter, the whole buffer for AllReduce / Broadcast / Reduce, the partition scale for V.
  std::size_t count = 0;
  bool in_place = false;
  int root = 0;
  // Bytes added to 256-byte-aligned bases (misaligned buffers). In place, recv_shift places the
  // one buffer.
  std::size_t send_shift = 0;
  std::size_t recv_shift = 0;
  // V collectives: explicit displacements with gaps (true) or NULL (back to back), and which of
  // the count patterns.
  bool v_displs = true;
  int v_seed = 0;
  // AllToAllV in place with receive partitions unlike its send partitions: must be refused.
  bool v_unequal = false;
  // Element index of every rank's first input value (values.h: value_index): calls that differ
  // only here carry different data, so a stale or torn packet of the call before shows.
  std::size_t salt = 0;
};

std::string case_name(const Case& c);

// A range of the receive buffer the call writes: elements [dst, dst + len) take rank
// src_rank's send elements [src, src + len), or (src_rank == kReduced) the reduction of every
// rank's send elements [src, src + len).
struct Segment {
  static constexpr int kReduced = -1;
  std::size_t dst = 0;
  std::size_t len = 0;
  int src_rank = kReduced;
  std::size_t src = 0;
};

// One rank's side of a case. Out of place, send and recv are separate buffers; in place, one
// buffer of buffer_elems elements holds the send data at send_at and the output at recv_at.
struct RankPlan {
  std::size_t send_elems = 0;
  std::size_t recv_elems = 0;
  bool in_place = false;
  std::size_t send_at = 0;
  std::size_t recv_at = 0;
  std::size_t buffer_elems = 0;
  // The call must be refused with ncclInvalidArgument or ncclInvalidUsage (in-place AllToAllV
  // with unequal partitions); count 0 may also succeed as a no-op.
  bool refused = false;
  std::vector<Segment> writes;

  // V arguments as this rank passes them. AllGatherV / ReduceScatterV: counts / displs;
  // AllToAllV: counts / displs for sending, rcounts / rdispls for receiving, maxcount.
  std::vector<std::size_t> counts, displs, rcounts, rdispls;
  std::size_t maxcount = 0;
  bool null_displs = false;
};

RankPlan plan_rank(const Case& c, int nranks, int rank);

// The NCCL count that makes a case of `bytes` bytes as DESIGN.md section 7 sizes messages (the
// full gathered output for AllGather(V) and Gather, the full per-rank input for the others),
// made odd so the tail is never a multiple of 16 bytes.
std::size_t count_for_bytes(Coll c, int nranks, std::size_t elem_bytes, std::size_t bytes);

}  // namespace purlin::native_test
