// The eleven native collectives (and AllToAll from grouped send/recv) as the benchmark calls them: message sizes as DESIGN.md section 7
// defines them (the full gathered output for AllGather(V) and Gather, the full per-rank input for
// the others), bf16 elements, ncclSum, roots 0, V collectives with equal partitions and NULL
// displacements (comparable with their fixed counterparts), and nccl-tests' bus bandwidth factors.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <vector>

namespace purlin::snac_bench {

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
  // AllToAll as frameworks build it from point-to-point calls: one group of an ncclSend and an
  // ncclRecv per peer (NCCL's own AllToAll is made this way).
  kSendRecvAllToAll,
};
inline constexpr int kColls = 12;
inline constexpr std::size_t kElemBytes = 2;  // bf16

const char* name(Coll c);
bool parse(const std::string& s, Coll* c);  // case-insensitive name
// A byte count with an optional K, M or G suffix (powers of two); false if s is none.
bool parse_bytes(const std::string& s, std::size_t* out);

// One rank's side of a call of `bytes` bytes on n ranks. count is NCCL's count argument (0 when
// bytes cannot be cut into n nonempty bf16 partitions).
struct Shape {
  std::size_t count = 0;
  std::size_t in_bytes = 0;
  std::size_t out_bytes = 0;
  std::vector<std::size_t> counts;  // V partitions (every entry = count)
};
Shape shape(Coll c, int n, std::size_t bytes);

// nccl-tests' busbw / algbw factor.
double bus_factor(Coll c, int n);

// Bytes of output the call writes, summed over all ranks (the HBM-efficiency numerator's M * n).
double output_bytes(Coll c, int n, std::size_t bytes);

// False for the V collectives when the loaded library lacks Purlin's entry points (a reference
// NCCL: library.h).
bool available(Coll c);

// Enqueues one call on `stream` (roots: rank 0); ncclInvalidUsage when !available(c).
ncclResult_t issue(Coll c, const Shape& s, const void* in, void* out, ncclComm_t comm, cudaStream_t stream);

}  // namespace purlin::snac_bench
