// The in-process side of the native tests: worlds of n ranks that share GPU 0 (threads of one
// process, one stream each, as DESIGN.md section 5 allows and NCCL itself refuses) or, with
// PURLIN_TEST_GPUS, spread over several GPUs (placement.h), the two ways of issuing a case (one
// thread inside ncclGroupStart/End, or one thread per rank), and the gtest plumbing (SKIPPED
// without a GPU, a cap on reported failures).
#pragma once

#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cases.h"
#include "placement.h"
#include "runner.h"

namespace purlin::native_test {

bool have_gpu();

// "W<n>": the world-size part of parameterized test names.
std::string world_label(int n);

class World {
 public:
  // n ranks through ncclCommInitAll, rank r on GPU r % PURLIN_TEST_GPUS (default: all on GPU 0),
  // each with its own non-blocking stream on its GPU, or with `share_streams`'s streams (same
  // size and placement) so that calls of two communicators interleave in stream order. nullptr
  // with *error on failure, including a communicator that is not native.
  static std::unique_ptr<World> create(int n, std::string* error, const World* share_streams = nullptr);
  // The process-wide world of n ranks, created on first use (nullptr with *error on failure).
  static World* shared(int n, std::string* error);
  // Destroys the shared worlds (before the CUDA runtime shuts down).
  static void destroy_shared();

  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int size() const { return static_cast<int>(comms_.size()); }
  ncclComm_t comm(int r) const { return comms_[static_cast<std::size_t>(r)]; }
  cudaStream_t stream(int r) const { return streams_[static_cast<std::size_t>(r)]; }
  // Rank r's GPU: where its stream lives and its buffers belong (ScopedDevice).
  int device(int r) const { return rank_device(r, gpus_); }
  // Waits for all work on every GPU of the world, not only the current one.
  cudaError_t synchronize_devices() const;
  std::vector<LocalRank> ranks() const;
  // A runner over every rank, kept with the world so buffers are reused across tests.
  Runner& runner();

 private:
  World() = default;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  bool owns_streams_ = true;
  int gpus_ = 1;  // the GPUs the ranks spread over
  std::unique_ptr<Runner> runner_;
};

enum class Style {
  kGroup,    // one thread, every rank's call inside one ncclGroupStart/End
  kThreads,  // one thread per rank, no group
};
const char* style_name(Style s);

struct Issued {
  std::vector<ncclResult_t> results;
  ncclResult_t group = ncclSuccess;
};

// Issues the runner's prepared case on all of its ranks.
Issued issue_all(Runner& runner, Style style);

// prepare, issue, finish: "" when the case passed, else a report naming it.
std::string run_case(Runner& runner, const Case& c, Style style);

// Reports failing cases through ADD_FAILURE; after kMaxFailures the test should stop, since one
// broken path otherwise prints thousands of reports.
class CaseLog {
 public:
  static constexpr int kMaxFailures = 10;
  // Runs c; false when the test should stop.
  bool run(Runner& runner, const Case& c, Style style = Style::kGroup);
  // Counts a case that ran elsewhere; false when the test should stop.
  bool record(const Case& c, int nranks, Style style, const std::string& report);
  int cases() const { return cases_; }
  int failures() const { return failures_; }

 private:
  int cases_ = 0;
  int failures_ = 0;
};

// Fixture base: SKIPPED without a CUDA device.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // The shared world of n ranks; fails the test (and returns nullptr) if it cannot be made.
  World* world(int n);
};

template <class P>
class GpuTestWithParam : public GpuTest, public ::testing::WithParamInterface<P> {};

// Sets an environment variable for one scope (a communicator reads PURLIN_TIMEOUT_S when it is
// created: set for one world only), then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) {
      had_ = true;
      saved_ = v;
    }
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, saved_.c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string saved_;
};

}  // namespace purlin::native_test
