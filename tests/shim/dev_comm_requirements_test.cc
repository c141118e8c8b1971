// ncclDevCommRequirements of either layout forwarded in the one the real NCCL reads
// (nccl_shim/dev_comm_requirements.h), without a GPU or a real NCCL.
#include "dev_comm_requirements.h"

#include <gtest/gtest.h>

#include <cstring>

namespace purlin::shim {
namespace {

constexpr const char* kFn = "ncclDevCommCreate";
constexpr int kReal228 = NCCL_VERSION(2, 28, 9);
constexpr int kReal230 = NCCL_VERSION(2, 30, 7);
constexpr int kReal232 = NCCL_VERSION(2, 32, 3);

auto* const kResources = reinterpret_cast<ncclDevResourceRequirements_t*>(0x7f0000001000);
auto* const kTeams = reinterpret_cast<ncclTeamRequirements_t*>(0x7f0000002000);

DevCommRequirements228 caller228() {
  DevCommRequirements228 r{};
  r.resourceRequirementsList = kResources;
  r.teamRequirementsList = kTeams;
  r.lsaMultimem = true;
  r.lsaBarrierCount = 3;
  r.ginContextCount = 4;
  r.ginCounterCount = 5;
  return r;
}

ncclDevCommRequirements_t caller232() {
  ncclDevCommRequirements_t r = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  r.resourceRequirementsList = kResources;
  r.lsaBarrierCount = 3;
  r.ginCounterCount = 5;
  r.worldGinBarrierCount = 6;
  r.cftBarrierCount = 7;
  return r;
}

TEST(DevCommRequirements, LayoutSizesOfEachRelease) {
  EXPECT_EQ(requirements_size_of(kReal228), 56u);
  EXPECT_EQ(requirements_size_of(NCCL_VERSION(2, 29, 3)), 72u);
  EXPECT_EQ(requirements_size_of(NCCL_VERSION(2, 29, 7)), 88u);
  EXPECT_EQ(requirements_size_of(kReal230), 96u);
  EXPECT_EQ(requirements_size_of(NCCL_VERSION(2, 31, 0)), 96u) << "untagged: the newest layout before it";
  EXPECT_EQ(requirements_size_of(kReal232), 120u);
}

TEST(DevCommRequirements, Layout228ToARealNccl228IsUnchanged) {
  const DevCommRequirements228 user = caller228();
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal228), ncclSuccess);
  EXPECT_EQ(std::memcmp(fwd.get(), &user, sizeof(user)), 0);
}

TEST(DevCommRequirements, Layout228GetsTheHeaderForANewerRealNccl) {
  const DevCommRequirements228 user = caller228();
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal232), ncclSuccess);
  const ncclDevCommRequirements_t& r = *fwd.get();
  EXPECT_EQ(r.size, 72u);
  EXPECT_EQ(r.magic, static_cast<unsigned>(NCCL_API_MAGIC));
  EXPECT_EQ(r.version, static_cast<unsigned>(kHeaderless228Version)) << "the ncclDevComm layout the caller reads";
  EXPECT_EQ(r.resourceRequirementsList, kResources);
  EXPECT_EQ(r.teamRequirementsList, kTeams);
  EXPECT_TRUE(r.lsaMultimem);
  EXPECT_EQ(r.lsaBarrierCount, 3);
  EXPECT_EQ(r.ginContextCount, 4);
  EXPECT_EQ(r.ginCounterCount, 5);
}

// A 2.28 struct whose lists are NULL starts with a zero word, not a size.
TEST(DevCommRequirements, Layout228WithoutListsIsStillHeaderless) {
  DevCommRequirements228 user{};
  user.barrierCount = 2;
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal230), ncclSuccess);
  EXPECT_EQ(fwd.get()->size, 72u);
  EXPECT_EQ(fwd.get()->barrierCount, 2);
}

TEST(DevCommRequirements, HeaderLayoutToTheSameVersionIsWhole) {
  const ncclDevCommRequirements_t user = caller232();
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal232), ncclSuccess);
  EXPECT_EQ(std::memcmp(fwd.get(), &user, sizeof(user)), 0);
}

// NCCL copies `size` bytes without clamping them: an older real NCCL must get no more than its own struct.
TEST(DevCommRequirements, HeaderLayoutIsCutToAnOlderRealNcclsSize) {
  const ncclDevCommRequirements_t user = caller232();
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal230), ncclSuccess);
  EXPECT_EQ(fwd.get()->size, 96u);
  EXPECT_EQ(fwd.get()->version, user.version) << "the real NCCL decides from it which ncclDevComm it writes";
  EXPECT_EQ(fwd.get()->worldGinBarrierCount, 6);
  EXPECT_EQ(fwd.get()->cftBarrierCount, 0) << "beyond 2.30's struct: the default";
}

TEST(DevCommRequirements, AnOlderCallersSizeIsKept) {
  ncclDevCommRequirements_t user = caller232();
  user.size = 96;
  user.version = kReal230;
  user.cftBarrierCount = 99;  // not the caller's: past its size
  RealRequirements fwd;
  ASSERT_EQ(fwd.build(kFn, &user, kReal232), ncclSuccess);
  EXPECT_EQ(fwd.get()->size, 96u);
  EXPECT_EQ(fwd.get()->cftBarrierCount, 0);
}

TEST(DevCommRequirements, HeaderLayoutCannotReachARealNccl228) {
  const ncclDevCommRequirements_t user = caller232();
  RealRequirements fwd;
  EXPECT_EQ(fwd.build(kFn, &user, kReal228), ncclInvalidUsage);
}

TEST(DevCommRequirements, UninitializedHeaderIsRefused) {
  ncclDevCommRequirements_t user = caller232();
  user.magic = 0;
  RealRequirements fwd;
  EXPECT_EQ(fwd.build(kFn, &user, kReal232), ncclInvalidArgument);
}

}  // namespace
}  // namespace purlin::shim
