// runtime::DeviceState with ranks as processes: peers are reached through CUDA IPC mappings
// (also on one GPU, as under MPS). SKIPPED without a GPU.
//
// Its own executable because the parent must never initialize CUDA (a forked child cannot use
// a CUDA context it inherits), so even the GPU probe runs in a child.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "bootstrap_test_util.h"
#include "device_state_checks.h"
#include "runtime/bootstrap/bootstrap.h"

namespace purlin::runtime::testing {
namespace {

int gpu_count_in_child() {
  const pid_t pid = ::fork();
  if (pid == 0) _exit(std::min(gpu_count(), 100));
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 0;
  return WEXITSTATUS(status);
}

void run_two_processes(int gpus) {
  use_loopback_env();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  const std::string errors = run_ranks_in_processes(
      2, [&](int rank) { return create_and_check(id, rank, 2, rank % gpus, nullptr); },
      std::chrono::seconds(120));
  EXPECT_EQ(errors, "");
}

TEST(DeviceStateIpcGpu, TwoProcessesShareOneGpu) {
  if (gpu_count_in_child() < 1) GTEST_SKIP() << "no GPU";
  run_two_processes(1);
}

TEST(DeviceStateIpcGpu, TwoProcessesOnTwoGpus) {
  if (gpu_count_in_child() < 2) GTEST_SKIP() << "needs 2 GPUs";
  run_two_processes(2);
}

}  // namespace
}  // namespace purlin::runtime::testing
