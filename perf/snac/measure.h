// Ranks as threads of this process, sharing GPU 0 or dealt over several GPUs, and the DESIGN.md
// section 7 timing method applied to all of them at once.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "collectives.h"

namespace purlin::snac_bench {

class Ranks {
 public:
  // n ranks over GPUs 0 .. gpus - 1 (ncclCommInitAll; device says which rank runs where), one
  // non-blocking stream each, made on its rank's GPU. gpus above n is cut to n. False with
  // *error on failure, also when Purlin is loaded and the communicator would not run on its kernels.
  bool create(int n, int gpus, std::string* error);
  ~Ranks();
  int size() const { return static_cast<int>(comms.size()); }
  // Rank r's GPU. Dealt round-robin, so that ranks sharing a GPU are spread evenly: with one GPU
  // (the default) every rank shares GPU 0.
  int device(int r) const { return r % gpus; }
  // cudaDeviceSynchronize on every GPU in use: work on a GPU's legacy stream (cudaMemset, a
  // pageable cudaMemcpy) that the ranks' non-blocking streams do not wait for. False if any fails.
  bool synchronize() const;

  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  int gpus = 1;  // GPUs in use: 0 .. gpus - 1
};

struct Method {
  int max_calls = 128;       // invocations per graph (fewer for slow calls, see time_collective)
  int replays = 8;           // timed replays
  double replay_ms = 20.0;   // one replay's target length when calls are slow
};

struct Timing {
  double us = 0;        // per call: the slowest rank's elapsed time / (calls * replays)
  int calls = 0;        // invocations captured per graph
  int replays = 0;      // timed replays
  bool ok = false;
  std::string error;
};

// Per rank, in its own thread: one eager warm-up call, then three timed eager probes that all
// ranks start together, capture `calls`
// calls into a CUDA graph on the rank's stream, one replay to warm up, then `replays` replays
// between two events. calls is max_calls unless the fastest probe's slowest rank says a replay
// would exceed replay_ms; then fewer (at least 1), and 3 replays when a single call takes longer than
// replay_ms. All ranks use the same calls and replays (they must make the same calls).
Timing time_collective(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                       const std::vector<void*>& out, const Method& m);

// One eager call on every rank (each in its own thread), waited for. Empty on success, else which
// rank failed and how.
std::string run_once(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                     const std::vector<void*>& out);

// Read + write rate of a device-to-device cudaMemcpyAsync of `bytes` (2 * bytes per copy) within
// GPU `device`, in GB/s, averaged over `copies` copies; 0 on failure.
double memcpy_rw_GBps(int device, std::size_t bytes, int copies);

}  // namespace purlin::snac_bench
