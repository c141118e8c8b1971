// The NCCL 2.31/2.32 entry points on a native communicator (nccl_shim/coll_config.h,
// api_comm_manage.cc): an ncclXConfig collective whose config asks nothing only the real
// NCCL can give runs on Purlin's kernels like the plain call, exactly, and records its
// launch-completion event; ncclCommQueryProperties answers from Purlin's own knowledge.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <nccl_device.h>  // ncclCommQueryProperties

#include <cstdint>
#include <vector>

#include "device.h"
#include "harness.h"

namespace purlin::native_test {
namespace {

constexpr int kRanks = 4;

class NativeConfig : public GpuTest {};

TEST_F(NativeConfig, QueryPropertiesArePurlinsOwn) {
  World* w = world(kRanks);
  if (w == nullptr) return;
  std::uint64_t hash = 0;
  for (int r = 0; r < kRanks; ++r) {
    ncclCommProperties_t props{};
    props.size = sizeof(props);
    props.magic = NCCL_API_MAGIC;
    props.version = NCCL_VERSION_CODE;
    ASSERT_EQ(ncclCommQueryProperties(w->comm(r), &props), ncclSuccess);
    EXPECT_EQ(props.rank, r);
    EXPECT_EQ(props.nRanks, kRanks);
    EXPECT_EQ(props.cudaDev, 0);
    EXPECT_FALSE(props.deviceApiSupport) << "Purlin's kernels offer no NCCL device API";
    EXPECT_NE(props.commHash, 0u);
    if (r == 0) hash = props.commHash;
    EXPECT_EQ(props.commHash, hash) << "every rank names the same communicator";
  }
}

// Every rank contributes rank + 1 in each element; the sum is known. Hints Purlin does not
// take, a profiler tag and an unforced selection leave the call native and exact.
TEST_F(NativeConfig, AllReduceConfigRunsNativelyAndRecordsItsEvent) {
  World* w = world(kRanks);
  if (w == nullptr) return;
  constexpr std::size_t kCount = 1 << 16;
  std::vector<DeviceBuffer> send(kRanks), recv(kRanks);
  std::vector<cudaEvent_t> events(kRanks, nullptr);
  for (int r = 0; r < kRanks; ++r) {
    std::vector<float> host(kCount, static_cast<float>(r + 1));
    ASSERT_EQ(send[r].reserve(kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(recv[r].reserve(kCount * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(send[r].get(), host.data(), kCount * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&events[r], cudaEventDisableTiming), cudaSuccess);
  }
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.maxCTAs = 8;
  config.userProfilerTag = 5;
  config.algSelection = "ring";
  config.forceAlgSelection = 0;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < kRanks; ++r) {
    config.launchCompletionEvent = events[r];  // read when the call is made
    ASSERT_EQ(ncclAllReduceConfig(send[r].get(), recv[r].get(), kCount, ncclFloat32, ncclSum, w->comm(r),
                                  w->stream(r), &config),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  const float expected = kRanks * (kRanks + 1) / 2.0f;
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(cudaStreamSynchronize(w->stream(r)), cudaSuccess);
    EXPECT_EQ(cudaEventQuery(events[r]), cudaSuccess) << "rank " << r << ": launch event not recorded";
    std::vector<float> host(kCount, 0.0f);
    ASSERT_EQ(cudaMemcpy(host.data(), recv[r].get(), kCount * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    std::size_t wrong = 0;
    for (float v : host) wrong += v != expected;
    EXPECT_EQ(wrong, 0u) << "rank " << r;
    EXPECT_EQ(cudaEventDestroy(events[r]), cudaSuccess);
  }
}

}  // namespace
}  // namespace purlin::native_test
