// Native communicators on a GPU that gives a block less shared memory than the kernels were
// built for (launch/kernel_smem.h), imitated with PURLIN_SMEM_LIMIT_BYTES (read when a
// communicator is created): the Atom keeps its stages with smaller slots, or runs on registers,
// and every collective stays exact. A limit that cannot even hold the source table refuses the
// communicator instead of failing its launches.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <optional>
#include <string>

#include "cases.h"
#include "harness.h"

namespace purlin::native_test {
namespace {

constexpr int kRanks = 4;

class SmemLimit : public GpuTest {
 protected:
  // The variable as it was (the whole suite may run under it), restored after each world.
  static std::unique_ptr<World> world_with(const char* limit, std::string* error) {
    constexpr const char* kName = "PURLIN_SMEM_LIMIT_BYTES";
    const char* was = ::getenv(kName);
    const std::optional<std::string> saved = was != nullptr ? std::optional<std::string>(was) : std::nullopt;
    ::setenv(kName, limit, 1);
    std::unique_ptr<World> w = World::create(kRanks, error);
    if (saved) {
      ::setenv(kName, saved->c_str(), 1);
    } else {
      ::unsetenv(kName);
    }
    return w;
  }

  // Every collective at a latency and a throughput size: bf16 sum where it reduces (one
  // source per pipeline call: the staged copies and single-source reduces take the shrunk
  // slots), and each once more with misaligned buffers (the realigning pipeline).
  static void run_every_collective(const char* limit) {
    std::string error;
    std::unique_ptr<World> w = world_with(limit, &error);
    ASSERT_TRUE(w) << "world of " << kRanks << " ranks with PURLIN_SMEM_LIMIT_BYTES=" << limit << ": " << error;
    CaseLog log;
    for (int i = 0; i < kColls; ++i) {
      for (std::size_t bytes : {std::size_t{1031}, std::size_t{8} << 20}) {
        for (std::size_t shift : {std::size_t{0}, std::size_t{6}}) {
          Case c;
          c.coll = static_cast<Coll>(i);
          c.type = ncclBfloat16;
          c.op = Op::kSum;
          c.count = count_for_bytes(c.coll, kRanks, 2, bytes);
          c.root = 1;
          c.send_shift = shift;
          c.recv_shift = shift == 0 ? 0 : shift + 4;
          if (!log.run(w->runner(), c)) return;
        }
      }
    }
  }
};

// sm_80's 163 KiB: copies keep 8 x 16 KiB, reductions get 3 x 54.25 KiB.
TEST_F(SmemLimit, ExactAtTheA100Limit) { run_every_collective("166912"); }

// sm_86 / sm_89 / sm_120's 99 KiB: both families shrink their slots (8 x 12.25 KiB, 3 x 32.875 KiB).
TEST_F(SmemLimit, ExactAtAConsumerGpuLimit) { run_every_collective("101376"); }

// 2 KiB: copies have no room for 8 slots and run on registers; reductions stage 3 x 512 bytes.
TEST_F(SmemLimit, ExactOnRegistersAndTinySlots) { run_every_collective("2048"); }

TEST_F(SmemLimit, ALimitBelowTheSourceTableRefusesTheCommunicator) {
  std::string error;
  EXPECT_FALSE(world_with("16", &error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace purlin::native_test
