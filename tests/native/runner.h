// Runs one test case on the local ranks of a communicator and checks it against the host
// reference. A Runner owns, per local rank, a send and a receive buffer framed by guard bytes;
// it works the same for every rank of one process (threads) and for one rank of a
// multi-process job (MPS): the reference recomputes every rank's input from (rank, index).
// Each rank's buffers and fills live on that rank's GPU (LocalRank::device).
//
//   prepare(c)   buffers sized, guards and untouched regions set to a sentinel, inputs filled,
//                PreMulSum ops created; enqueued on each rank's stream
//   issue(i)     local rank i's call, on its stream (the caller decides threads or a group)
//   finish(...)  waits for the streams, downloads both buffers, compares them byte for byte with
//                the expected images (guards, untouched regions and inputs included)
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cases.h"
#include "device.h"

namespace purlin::native_test {

struct LocalRank {
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;  // the GPU of comm and stream
};

class Runner {
 public:
  Runner(int nranks, std::vector<LocalRank> ranks);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  int nranks() const { return nranks_; }
  std::size_t local_ranks() const { return slots_.size(); }
  int device(std::size_t i) const;  // local rank i's GPU
  const Case& current() const { return case_; }

  // Sets up `c` on every local rank; false with *error on a CUDA or NCCL failure.
  bool prepare(const Case& c, std::string* error);

  // Local rank i's call. Thread-safe for distinct i.
  ncclResult_t issue(std::size_t i) const;

  // After the calls: `results` holds what each local rank's call returned and `group` what the
  // enclosing ncclGroupEnd returned (ncclSuccess without a group). Checks the return codes (a
  // refused case must be refused, any other must succeed), the communicators' async errors and
  // every byte of both buffers. Returns "" when everything matches, else a report.
  std::string finish(const std::vector<ncclResult_t>& results, ncclResult_t group);

 private:
  struct Slot;
  std::string check_bytes();

  int nranks_;
  Case case_{};
  // One copy per GPU in use, made on first use: a fill kernel reads the table on its own GPU,
  // never another's through peer access.
  std::map<int, DeviceTables> tables_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace purlin::native_test
