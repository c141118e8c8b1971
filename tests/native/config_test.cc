// The NCCL 2.31/2.32 entry points on a native communicator (nccl_shim/coll_config.h,
// api_comm_manage.cc): an ncclXConfig collective whose config asks nothing only the real
// NCCL can give runs on Purlin's kernels like the plain call, exactly, and records its
// launch-completion event; ncclCommQueryProperties answers from Purlin's own knowledge.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <nccl_device.h>  // ncclCommQueryProperties

#include <cstdint>
#include <functional>
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
    EXPECT_EQ(props.cudaDev, w->device(r));
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
    const ScopedDevice on(w->device(r));  // buffers and the event on the rank's GPU
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
    const ScopedDevice on(w->device(r));
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

// Every ncclXConfig collective of NCCL 2.31/2.32, with a config that asks nothing only the
// real NCCL can give: each runs on Purlin's kernels like its plain call, exactly, and records
// its launch-completion event. Element j of rank r's input is (r + 1) + j % 13, so every sum
// over 4 ranks is an integer a float holds exactly.
TEST_F(NativeConfig, EveryConfigCollectiveRunsNativelyExactly) {
  World* w = world(kRanks);
  if (w == nullptr) return;
  constexpr std::size_t c = 4096;          // per-rank count
  constexpr std::size_t all = kRanks * c;  // whole-buffer count
  constexpr int root = kRanks - 1;
  const auto in = [](int r, std::size_t j) { return static_cast<float>(r + 1 + static_cast<int>(j % 13)); };
  const auto sum = [&](std::size_t j) {
    float s = 0.0f;
    for (int r = 0; r < kRanks; ++r) s += in(r, j);
    return s;
  };
  struct Check {
    const char* name;
    std::function<ncclResult_t(int, const void*, void*, const ncclCollConfig_t*)> issue;
    std::size_t in_count;
    std::size_t out_count;
    std::function<bool(int, std::size_t, float)> ok;  // rank, output index, value
  };
  const std::vector<Check> checks = {
      {"ncclAllReduceConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclAllReduceConfig(s, d, all, ncclFloat32, ncclSum, w->comm(r), w->stream(r), cfg);
       },
       all, all, [&](int, std::size_t i, float v) { return v == sum(i); }},
      {"ncclBroadcastConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclBroadcastConfig(s, d, all, ncclFloat32, root, w->comm(r), w->stream(r), cfg);
       },
       all, all, [&](int, std::size_t i, float v) { return v == in(root, i); }},
      {"ncclReduceConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclReduceConfig(s, d, all, ncclFloat32, ncclSum, root, w->comm(r), w->stream(r), cfg);
       },
       all, all, [&](int r, std::size_t i, float v) { return r != root || v == sum(i); }},
      {"ncclAllGatherConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclAllGatherConfig(s, d, c, ncclFloat32, w->comm(r), w->stream(r), cfg);
       },
       c, all, [&](int, std::size_t i, float v) { return v == in(static_cast<int>(i / c), i % c); }},
      {"ncclReduceScatterConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclReduceScatterConfig(s, d, c, ncclFloat32, ncclSum, w->comm(r), w->stream(r), cfg);
       },
       all, c, [&](int r, std::size_t i, float v) { return v == sum(static_cast<std::size_t>(r) * c + i); }},
      {"ncclAlltoAllConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclAlltoAllConfig(s, d, c, ncclFloat32, w->comm(r), w->stream(r), cfg);
       },
       all, all,
       [&](int r, std::size_t i, float v) {
         return v == in(static_cast<int>(i / c), static_cast<std::size_t>(r) * c + i % c);
       }},
      {"ncclGatherConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclGatherConfig(s, d, c, ncclFloat32, root, w->comm(r), w->stream(r), cfg);
       },
       c, all,
       [&](int r, std::size_t i, float v) { return r != root || v == in(static_cast<int>(i / c), i % c); }},
      {"ncclScatterConfig",
       [&](int r, const void* s, void* d, const ncclCollConfig_t* cfg) {
         return ncclScatterConfig(s, d, c, ncclFloat32, root, w->comm(r), w->stream(r), cfg);
       },
       all, c, [&](int r, std::size_t i, float v) { return v == in(root, static_cast<std::size_t>(r) * c + i); }},
  };
  for (const Check& check : checks) {
    SCOPED_TRACE(check.name);
    std::vector<DeviceBuffer> send(kRanks), recv(kRanks);
    std::vector<cudaEvent_t> events(kRanks, nullptr);
    for (int r = 0; r < kRanks; ++r) {
      const ScopedDevice on(w->device(r));  // buffers and the event on the rank's GPU
      std::vector<float> host(check.in_count);
      for (std::size_t j = 0; j < host.size(); ++j) host[j] = in(r, j);
      ASSERT_EQ(send[r].reserve(check.in_count * sizeof(float)), cudaSuccess);
      ASSERT_EQ(recv[r].reserve(check.out_count * sizeof(float)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(send[r].get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaMemset(recv[r].get(), 0, check.out_count * sizeof(float)), cudaSuccess);
      ASSERT_EQ(cudaEventCreateWithFlags(&events[r], cudaEventDisableTiming), cudaSuccess);
    }
    ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
    config.maxCTAs = 8;
    config.algSelection = "ring";
    config.forceAlgSelection = 0;
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < kRanks; ++r) {
      config.launchCompletionEvent = events[r];
      ASSERT_EQ(check.issue(r, send[r].get(), recv[r].get(), &config), ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < kRanks; ++r) {
      const ScopedDevice on(w->device(r));
      ASSERT_EQ(cudaStreamSynchronize(w->stream(r)), cudaSuccess);
      EXPECT_EQ(cudaEventQuery(events[r]), cudaSuccess) << "rank " << r << ": launch event not recorded";
      std::vector<float> host(check.out_count, 0.0f);
      ASSERT_EQ(cudaMemcpy(host.data(), recv[r].get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost),
                cudaSuccess);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < host.size(); ++i) wrong += check.ok(r, i, host[i]) ? 0 : 1;
      EXPECT_EQ(wrong, 0u) << "rank " << r;
      EXPECT_EQ(cudaEventDestroy(events[r]), cudaSuccess);
    }
  }
}

}  // namespace
}  // namespace purlin::native_test
