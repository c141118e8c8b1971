// The kernels' shared memory from a device's limits (launch/kernel_smem.h), on the limits
// cudaDeviceGetAttribute reports for the GPUs Purlin targets. No GPU needed.
#include "launch/kernel_smem.h"

#include <gtest/gtest.h>

#include <cstddef>

namespace purlin::launch {
namespace {

// {sm_major, MaxSharedMemoryPerBlockOptin, MaxSharedMemoryPerMultiprocessor, ReservedSharedMemoryPerBlock}
constexpr DeviceLimits kA100{8, 166912, 167936, 1024};      // sm_80: 163 KiB per block
constexpr DeviceLimits kH100{9, 232448, 233472, 1024};      // sm_90: 227 KiB (H200 alike)
constexpr DeviceLimits kB200{10, 232448, 233472, 1024};     // sm_100: 227 KiB
constexpr DeviceLimits kConsumer{8, 101376, 102400, 1024};  // sm_86 / sm_89 / sm_120: 99 KiB
constexpr DeviceLimits kVolta{7, 98304, 98304, 0};

// What every selection must keep, whatever the limits: the launch fits the block, the workspace
// is a usable Atom workspace of at most the compiled size, and an SM holds the CTA.
void expect_fits(const DeviceLimits& d, int ranks, std::size_t static_smem = 0) {
  const KernelSmem k = select_smem(d, ranks, static_smem);
  ASSERT_TRUE(k.ok) << k.why;
  for (auto [f, most] :
       {std::pair{k.copy, CopyConfig::workspace_bytes}, std::pair{k.reduce, ReduceConfig::workspace_bytes}}) {
    EXPECT_LE(f.workspace_bytes + source_table_bytes(ranks) + static_smem, d.smem_per_block) << ranks;
    EXPECT_LE(f.workspace_bytes, most);
    EXPECT_EQ(f.workspace_bytes % 128, 0u);
    EXPECT_GE(f.ctas_per_sm, 1);
    EXPECT_EQ(f.stage_bytes % 128, 0u);
  }
}

TEST(KernelSmem, Sm90AndSm100KeepTheCompiledConfigurations) {
  for (const DeviceLimits& d : {kH100, kB200}) {
    for (int ranks : {1, 8, kMaxRanks}) {
      const KernelSmem k = select_smem(d, ranks);
      ASSERT_TRUE(k.ok);
      EXPECT_EQ(k.copy.workspace_bytes, CopyConfig::workspace_bytes);
      EXPECT_EQ(k.copy.stage_bytes, 16384u);
      EXPECT_EQ(k.reduce.workspace_bytes, ReduceConfig::workspace_bytes);
      EXPECT_EQ(k.reduce.stage_bytes, 65536u);
      // One CTA per SM, as when the policy table was measured.
      EXPECT_EQ(k.copy.ctas_per_sm, 1);
      EXPECT_EQ(k.reduce.ctas_per_sm, 1);
      expect_fits(d, ranks);
    }
  }
}

TEST(KernelSmem, Sm80KeepsCopiesAndShrinksReductionStages) {
  const KernelSmem k = select_smem(kA100, 8);
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.copy.workspace_bytes, CopyConfig::workspace_bytes);
  EXPECT_EQ(k.copy.stage_bytes, 16384u);
  // 166912 - 64 bytes of table, in 128s: 166784, three slots of 55552 (54.25 KiB).
  EXPECT_EQ(k.reduce.workspace_bytes, 166784u);
  EXPECT_EQ(k.reduce.stage_bytes, 55552u);
  EXPECT_EQ(k.copy.ctas_per_sm, 1);
  EXPECT_EQ(k.reduce.ctas_per_sm, 1);
  for (int ranks : {1, 2, 8, 33, kMaxRanks}) expect_fits(kA100, ranks);
}

TEST(KernelSmem, ConsumerLimitShrinksBothFamilies) {
  const KernelSmem k = select_smem(kConsumer, 8);
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.copy.workspace_bytes, 101248u);
  EXPECT_EQ(k.copy.stage_bytes, 12544u);  // 8 x 12.25 KiB
  EXPECT_EQ(k.reduce.workspace_bytes, 101248u);
  EXPECT_EQ(k.reduce.stage_bytes, 33664u);  // 3 x 32.875 KiB
  EXPECT_EQ(k.copy.ctas_per_sm, 1);
  EXPECT_EQ(k.reduce.ctas_per_sm, 1);
  for (int ranks : {1, 8, kMaxRanks}) expect_fits(kConsumer, ranks);
  // Static shared memory comes off the workspace too.
  expect_fits(kConsumer, 8, 4096);
  EXPECT_EQ(select_smem(kConsumer, 8, 4096).copy.workspace_bytes, 97152u);
}

// PURLIN_SMEM_LIMIT_BYTES=101376 on an H100: the consumer configuration, and two CTAs fit an SM
// (the co-residency budget's one per SM is then conservative).
TEST(KernelSmem, ConsumerLimitOnAnH100) {
  DeviceLimits d = kH100;
  d.smem_per_block = 101376;
  const KernelSmem k = select_smem(d, 8);
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.copy.stage_bytes, select_smem(kConsumer, 8).copy.stage_bytes);
  EXPECT_EQ(k.reduce.stage_bytes, select_smem(kConsumer, 8).reduce.stage_bytes);
  EXPECT_EQ(k.copy.ctas_per_sm, 2);
}

TEST(KernelSmem, VoltaRunsOnRegistersWithoutAWorkspace) {
  const KernelSmem k = select_smem(kVolta, 8);
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.copy.workspace_bytes, 0u);
  EXPECT_EQ(k.reduce.workspace_bytes, 0u);
  EXPECT_EQ(k.copy.stage_bytes, 0u);
}

TEST(KernelSmem, EveryLimitEitherFitsOrSaysWhy) {
  for (std::size_t per_block = 0; per_block <= kH100.smem_per_block + 4096; per_block += 251) {
    for (int ranks : {1, 8, kMaxRanks}) {
      DeviceLimits d = kH100;
      d.smem_per_block = per_block;
      const KernelSmem k = select_smem(d, ranks);
      if (per_block < source_table_bytes(ranks)) {
        EXPECT_FALSE(k.ok) << per_block << " " << ranks;
        EXPECT_STRNE(k.why, "");
      } else {
        expect_fits(d, ranks);
      }
    }
  }
}

// Too small for a workspace: the Atom runs on registers; too small for the table: no
// communicator, with a reason.
TEST(KernelSmem, TooSmallLimits) {
  DeviceLimits d = kH100;
  d.smem_per_block = 1024;
  KernelSmem k = select_smem(d, 8);
  ASSERT_TRUE(k.ok);
  EXPECT_EQ(k.copy.workspace_bytes, 0u);    // 8 slots of 256 do not fit in 896
  EXPECT_EQ(k.reduce.workspace_bytes, 896u);  // 3 do
  EXPECT_EQ(k.reduce.stage_bytes, 256u);
  d.smem_per_block = 256;
  k = select_smem(d, kMaxRanks);
  EXPECT_FALSE(k.ok);
  EXPECT_STRNE(k.why, "");
  d = kH100;
  d.smem_per_sm = 1000;  // an SM that cannot hold the table and the reserved kilobyte
  EXPECT_FALSE(select_smem(d, 8).ok);
  EXPECT_FALSE(select_smem(kH100, 0).ok);
  EXPECT_FALSE(select_smem(kH100, kMaxRanks + 1).ok);
}

}  // namespace
}  // namespace purlin::launch
