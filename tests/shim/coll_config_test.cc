// How the shim reads an ncclCollConfig_t and which of its requests only the real NCCL's
// ncclXConfig can serve (nccl_shim/coll_config.h), without a GPU or a real NCCL.
#include "coll_config.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace purlin::shim {
namespace {

TEST(CollConfig, NullIsThePlainCall) {
  std::shared_ptr<const ncclCollConfig_t> out = std::make_shared<ncclCollConfig_t>();
  ASSERT_EQ(read_coll_config("ncclAllReduceConfig", nullptr, &out), ncclSuccess);
  EXPECT_EQ(out, nullptr);
}

TEST(CollConfig, OnlyAnInitializedConfigIsRead) {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  std::shared_ptr<const ncclCollConfig_t> out;
  c.magic = 0;
  EXPECT_EQ(read_coll_config("ncclAllReduceConfig", &c, &out), ncclInvalidArgument);
  c.magic = NCCL_API_MAGIC;
  c.size = 3;
  EXPECT_EQ(read_coll_config("ncclAllReduceConfig", &c, &out), ncclInvalidArgument);
  EXPECT_EQ(out, nullptr);
}

// A shorter (older) struct: the fields it lacks take their defaults, whatever lies after it.
TEST(CollConfig, ReadByItsSize) {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  c.maxCTAs = 5;
  c.userProfilerTag = 9;
  c.launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0x1234);
  c.size = offsetof(ncclCollConfig_t, launchCompletionEvent);
  std::shared_ptr<const ncclCollConfig_t> out;
  ASSERT_EQ(read_coll_config("ncclAllReduceConfig", &c, &out), ncclSuccess);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->size, sizeof(ncclCollConfig_t));
  EXPECT_EQ(out->maxCTAs, 5);
  EXPECT_EQ(out->userProfilerTag, 9u);
  EXPECT_EQ(out->launchCompletionEvent, nullptr);
  EXPECT_EQ(out->forceAlgSelection, 1);
}

TEST(CollConfig, OnlyAForcedAlgorithmSelectionNeedsTheRealConfigCall) {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  EXPECT_FALSE(needs_real_config_call(c));
  c.minCTAs = 1;
  c.maxCTAs = 2;
  c.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY;
  c.userProfilerTag = 3;
  EXPECT_FALSE(needs_real_config_call(c)) << "hints and tags are served without it";
  c.algSelection = "";
  EXPECT_FALSE(needs_real_config_call(c)) << "an empty selection is automatic";
  c.algSelection = "ring";
  EXPECT_TRUE(needs_real_config_call(c));
  c.forceAlgSelection = 0;
  EXPECT_FALSE(needs_real_config_call(c)) << "an unforced selection allows Purlin's algorithm";
}

// Each ignored hint is warned about once per process, not at every call.
TEST(CollConfig, IgnoredHintsWarnOnce) {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  c.nvlsCTAs = 4;
  testing::internal::CaptureStderr();
  EXPECT_EQ(apply_coll_config("ncclAllGatherConfig", c, nullptr), ncclSuccess);
  EXPECT_EQ(apply_coll_config("ncclAllGatherConfig", c, nullptr), ncclSuccess);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("config->nvlsCTAs=4 ignored"), std::string::npos) << err;
  EXPECT_EQ(err.find("nvlsCTAs"), err.rfind("nvlsCTAs")) << "warned twice: " << err;
  // A real NCCL of 2.32 or later records the launch event itself: nothing to do here.
  EXPECT_EQ(apply_fields_newer_than("ncclAllGatherConfig", c, NCCL_VERSION(2, 32, 3), nullptr), ncclSuccess);
}

}  // namespace
}  // namespace purlin::shim
