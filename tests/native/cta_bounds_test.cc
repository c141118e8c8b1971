// Native communicators whose launches are bounded by NCCL_MAX_CTAS / NCCL_MIN_CTAS
// (policy::cta_bounds, read when a communicator is created): every collective stays exact
// with the fewest CTAs a launch may take, one per role group, and with a raised throughput
// budget, in both regimes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "cases.h"
#include "harness.h"

namespace purlin::native_test {
namespace {

constexpr int kRanks = 4;

class CtaBounds : public GpuTest {
 protected:
  void TearDown() override {
    ::unsetenv("NCCL_MAX_CTAS");
    ::unsetenv("NCCL_MIN_CTAS");
  }

  // Every collective, bf16 and sum where it reduces, at a latency size and at a
  // throughput size, on a fresh world created with `name`=`value`.
  void run_every_collective(const char* name, const char* value) {
    ::setenv(name, value, 1);
    std::string error;
    std::unique_ptr<World> w = World::create(kRanks, &error);
    ::unsetenv(name);
    ASSERT_TRUE(w) << "world of " << kRanks << " ranks with " << name << "=" << value << ": " << error;
    CaseLog log;
    for (int i = 0; i < kColls; ++i) {
      for (std::size_t bytes : {std::size_t{1031}, std::size_t{8} << 20}) {
        Case c;
        c.coll = static_cast<Coll>(i);
        c.type = ncclBfloat16;
        c.op = Op::kSum;
        c.count = count_for_bytes(c.coll, kRanks, 2, bytes);
        c.root = 1;
        if (!log.run(w->runner(), c)) return;
      }
    }
  }
};

TEST_F(CtaBounds, ExactWithThreeCtasPerLaunch) { run_every_collective("NCCL_MAX_CTAS", "1"); }

TEST_F(CtaBounds, ExactWithARaisedThroughputBudget) { run_every_collective("NCCL_MIN_CTAS", "24"); }

}  // namespace
}  // namespace purlin::native_test
