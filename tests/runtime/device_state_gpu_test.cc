// runtime::DeviceState on a GPU with ranks as threads of one process: peers are reached by
// pointer (peer access enabled across GPUs). SKIPPED without a GPU.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "bootstrap_test_util.h"
#include "device_state_checks.h"
#include "runtime/bootstrap/bootstrap.h"

namespace purlin::runtime::testing {
namespace {

void run_two_ranks(int gpus) {
  use_loopback_env();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::vector<int> devices;
  for (int r = 0; r < 2; ++r) devices.push_back(r % gpus);
  PointerBoard board(devices);
  const std::string errors = run_ranks_in_threads(2, [&](int rank) {
    return create_and_check(id, rank, 2, devices[static_cast<std::size_t>(rank)], &board);
  });
  EXPECT_EQ(errors, "");
  // One address space: every rank sees every block at the same address.
  EXPECT_EQ(board.tables[0], board.tables[1]);
  EXPECT_EQ(board.tables[0].size(), 6u);
}

TEST(DeviceStateGpu, TwoRanksShareOneGpu) {
  if (gpu_count() < 1) GTEST_SKIP() << "no GPU";
  run_two_ranks(1);
}

TEST(DeviceStateGpu, TwoRanksOnTwoGpus) {
  if (gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs";
  run_two_ranks(2);
}

}  // namespace
}  // namespace purlin::runtime::testing
