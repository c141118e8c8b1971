// gtest main of native_collectives_test. PURLIN_TIMEOUT_S bounds every device-side wait, so a
// protocol bug fails a test with a report instead of hanging it; it must be set before the first
// communicator reads it. An explicit setting in the environment wins.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness.h"

namespace {

// The shared worlds hold communicators and device memory: release them while the CUDA runtime
// is still up, not from static destructors.
class SharedWorlds : public ::testing::Environment {
 public:
  void TearDown() override { purlin::native_test::World::destroy_shared(); }
};

}  // namespace

int main(int argc, char** argv) {
  setenv("PURLIN_TIMEOUT_S", "60", /*overwrite=*/0);
  // Up to 8 ranks of this process share the GPU: their streams need hardware queues of their
  // own (device_state.cc: warn_if_queues_are_shared). Read when CUDA starts.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new SharedWorlds);
  return RUN_ALL_TESTS();
}
