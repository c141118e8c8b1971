// One native collective call as the runtime describes it: which declaration, which element type
// and op (runtime indices), the buffers and counts in NCCL's terms. The launch bridge
// (bridge.h) turns it into the layout shapes and the one precompiled kernel that runs it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace purlin::launch {

// The eleven declarations of layout/collectives.h, by name.
enum class Collective : std::uint8_t {
  all_gather,
  all_gather_v,
  reduce_scatter,
  reduce_scatter_v,
  all_to_all,
  all_to_all_v,
  scatter,
  gather,
  all_reduce,
  broadcast,
  reduce,
};
inline constexpr int kCollectives = 11;

// Element type: the ncclDataType_t value (ncclInt8 = 0 ... ncclFloat8e5m2 = 11), which is the
// order of atom::ElementTypes. Op: the order of atom::ReduceOps (ncclSum = 0 ... ncclAvg = 4,
// then 5 = PreMulSum).
inline constexpr int kElementTypes = 12;
inline constexpr int kReduceOps = 6;
inline constexpr int kPreMulSum = 5;

// The most ranks a native communicator may have: V partition tables travel inside the kernel's
// parameters (graph-capturable, no device allocation per call), two tables of 2 x kMaxRanks
// words each.
inline constexpr int kMaxRanks = 64;

// Partition sizes of a V collective, in elements, `ranks` entries each, in host memory (read
// during launch() only). A null `displs` means back to back in rank order.
struct VCounts {
  const std::size_t* counts = nullptr;
  const std::size_t* displs = nullptr;
};

struct Call {
  Collective collective = Collective::all_reduce;
  int type = 0;  // ncclDataType_t
  int op = 0;    // atom::ReduceOps index; ignored by collectives that copy
  const void* input = nullptr;
  void* output = nullptr;

  // Fixed collectives, as NCCL counts: the per-rank count (AllGather's sendcount,
  // ReduceScatter's recvcount, AllToAll's per-peer count, Gather's and Scatter's per-rank
  // count) or the whole buffer (AllReduce, Broadcast, Reduce).
  std::size_t count = 0;

  // V collectives. AllGatherV and ReduceScatterV: `in` describes the scattered side (identical on
  // every rank) and `out` is ignored. AllToAllV: `in` = what this rank sends to each peer,
  // `out` = what it receives from each, and `agreed_max` = the largest count any rank sends to
  // any rank (the same on every rank: it sets the epoch advance, layout/chunking.h).
  VCounts in{};
  VCounts out{};
  std::size_t agreed_max = 0;

  int root = 0;

  // PreMulSum: the scalar (of the element type) by value in the low bytes of `scalar_bits`
  // (host residence), or a device pointer read by the kernel (device residence).
  std::uint64_t scalar_bits = 0;
  const void* scalar_device = nullptr;

  cudaStream_t stream = nullptr;
};

}  // namespace purlin::launch
