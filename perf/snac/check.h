// Exact checks of the collectives against a host reference (DESIGN.md section 7), run before each
// size is timed and on whichever library is loaded, so that a speedup is only ever reported for
// results that are right.
//
// Every rank's input holds small integers (check.cc: pattern) chosen so that every partial sum
// over the communicator's ranks is an integer of magnitude <= 256, which bf16 represents exactly:
// a correct reduction gives the reference bit for bit whatever order it adds in, and any
// difference is an error, not rounding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives.h"
#include "measure.h"

namespace purlin::snac_bench {

struct CheckResult {
  bool ran = false;        // the call completed; false: error says why
  std::string error;
  std::size_t wrong = 0;   // wrong elements over all checked ranks
  std::string first_bad;   // the first wrong element (lowest rank, then lowest index)
};

class Checker {
 public:
  // Host staging for n ranks, bounded (kStagingBytes in check.cc) whatever the message size:
  // inputs are written and outputs read back in chunks.
  explicit Checker(int n);
  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Empty when checks can be exact for n ranks, else why not.
  const std::string& unusable() const { return unusable_; }

  // Fills the inputs that matter (every rank's, the root's alone for Broadcast and Scatter), runs
  // one eager call on all ranks and compares every output element that the collective defines
  // (the root's alone for Reduce and Gather) with the reference.
  CheckResult run(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                  const std::vector<void*>& out);

 private:
  std::uint16_t* slot(int i) { return staging_ + static_cast<std::size_t>(i) * slot_elems_; }

  int n_;
  int amp_ = 0;  // inputs lie in [-amp_, amp_): n_ * amp_ <= 256
  std::size_t slot_elems_ = 0;  // bf16 elements of staging per rank
  std::uint16_t* staging_ = nullptr;
  bool pinned_ = false;  // staging_ from cudaMallocHost (else new[])
  std::string unusable_;
};

}  // namespace purlin::snac_bench
