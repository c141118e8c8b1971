// How the shim reads an ncclConfig_t of NCCL 2.28 to 2.32 and which struct it hands a real
// NCCL of each version (nccl_shim/comm_config.h), without a GPU or a real NCCL.
#include "comm_config.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace purlin::shim {
namespace {

// The historical layouts, from NCCL's tagged nccl.h.in (v2.28.9-1, v2.29.7-1, v2.30.7-1),
// written out here so that the test does not trust the table it checks.
struct Config228 {
  size_t size;
  unsigned int magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName;
  int splitShare, trafficClass;
  const char* commName;
  int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
};
struct Config229 {
  size_t size;
  unsigned int magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName;
  int splitShare, trafficClass;
  const char* commName;
  int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
  int graphUsageMode, numRmaCtx;
};
struct Config230 {
  size_t size;
  unsigned int magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char* netName;
  int splitShare, trafficClass;
  const char* commName;
  int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
  int graphUsageMode, numRmaCtx;
  int maxP2pPeers, graphStreamOrdering;
};
static_assert(sizeof(Config228) == 80 && sizeof(Config229) == 88 && sizeof(Config230) == 96);
static_assert(sizeof(ncclConfig_t) == 120, "the 2.31/2.32 layout");

constexpr int kUndef = NCCL_CONFIG_UNDEF_INT;
constexpr const char* kFn = "ncclCommInitRankConfig";

// A caller's struct of an older version inside a buffer the size of the newest, the bytes
// past it holding what a newer field would: they must not be read.
template <class Old>
ncclConfig_t junk_after(const Old& old) {
  ncclConfig_t buf;
  std::memset(static_cast<void*>(&buf), 0x5a, sizeof(buf));
  std::memcpy(static_cast<void*>(&buf), &old, sizeof(old));
  return buf;
}

template <class Old>
Old initialized(unsigned int version) {
  const ncclConfig_t init = NCCL_CONFIG_INITIALIZER;
  Old old;
  std::memcpy(static_cast<void*>(&old), &init, sizeof(old));
  old.size = sizeof(Old);
  old.version = version;
  return old;
}

ncclConfig_t defaults() { return NCCL_CONFIG_INITIALIZER; }

// What Purlin makes of a caller's struct of an older layout, read over the defaults.
template <class Old>
ncclConfig_t read_old(const Old& old) {
  ncclConfig_t cfg = defaults();
  EXPECT_EQ(read_comm_config(kFn, junk_after(old), &cfg), ncclSuccess);
  return cfg;
}

const ConfigField& field(const char* name) {
  for (const ConfigField& f : config_fields())
    if (std::string(f.name) == name) return f;
  ADD_FAILURE() << "no field " << name;
  return config_fields()[0];
}

TEST(CommConfig, LayoutSizesOfEachRelease) {
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 28, 9)), sizeof(Config228));
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 29, 7)), sizeof(Config229));
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 30, 3)), 96u) << "maxP2pPeers, padded to 8";
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 30, 7)), sizeof(Config230));
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 31, 0)), sizeof(ncclConfig_t));
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 32, 3)), sizeof(ncclConfig_t));
  EXPECT_EQ(config_size_of(NCCL_VERSION(2, 40, 0)), sizeof(ncclConfig_t));
}

TEST(CommConfig, TableMatchesTheHistoricalLayouts) {
  EXPECT_EQ(field("nvlinkCentricSched").offset, offsetof(Config228, nvlinkCentricSched));
  EXPECT_EQ(field("commName").offset, offsetof(Config228, commName));
  EXPECT_EQ(field("numRmaCtx").offset, offsetof(Config229, numRmaCtx));
  EXPECT_EQ(field("graphStreamOrdering").offset, offsetof(Config230, graphStreamOrdering));
  std::set<std::string> names;
  for (const ConfigField& f : config_fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_GT(std::strlen(f.why), 10u) << f.name << " says nothing about what Purlin does with it";
  }
  EXPECT_EQ(names.size(), 23u) << "every field after version, 2.28's 14 and 2.32's 9 more";
}

TEST(CommConfig, OnlyAnInitializedConfigIsRead) {
  ncclConfig_t user = NCCL_CONFIG_INITIALIZER, cfg = defaults();
  user.magic = 0;
  EXPECT_EQ(read_comm_config(kFn, user, &cfg), ncclInvalidArgument);
  user.magic = NCCL_API_MAGIC;
  user.size = 8;
  EXPECT_EQ(read_comm_config(kFn, user, &cfg), ncclInvalidArgument);
}

TEST(CommConfig, Layout228IsReadByItsSize) {
  auto old = initialized<Config228>(NCCL_VERSION(2, 28, 9));
  old.blocking = 0;
  old.minCTAs = 2;
  old.maxCTAs = 6;
  old.commName = "torch-pg";
  old.nvlinkCentricSched = 1;
  const ncclConfig_t cfg = read_old(old);
  EXPECT_EQ(cfg.blocking, 0);
  EXPECT_EQ(cfg.minCTAs, 2);
  EXPECT_EQ(cfg.maxCTAs, 6);
  EXPECT_STREQ(cfg.commName, "torch-pg");
  EXPECT_EQ(cfg.nvlinkCentricSched, 1);
  EXPECT_EQ(cfg.cgaClusterSize, kUndef);
  for (int ncclConfig_t::*newer : {&ncclConfig_t::graphUsageMode, &ncclConfig_t::numRmaCtx, &ncclConfig_t::maxP2pPeers,
                                   &ncclConfig_t::graphStreamOrdering, &ncclConfig_t::hostCftMode,
                                   &ncclConfig_t::nvlsHostMode})
    EXPECT_EQ(cfg.*newer, kUndef) << "a field past the caller's size was read";
}

TEST(CommConfig, Layout229ReadsGraphUsageMode) {
  auto old = initialized<Config229>(NCCL_VERSION(2, 29, 7));
  old.graphUsageMode = 1;
  old.numRmaCtx = 4;
  const ncclConfig_t cfg = read_old(old);
  EXPECT_EQ(cfg.graphUsageMode, 1);
  EXPECT_EQ(cfg.numRmaCtx, 4);
  EXPECT_EQ(cfg.maxP2pPeers, kUndef);
}

TEST(CommConfig, Layout230ReadsMaxP2pPeersAndStreamOrdering) {
  auto old = initialized<Config230>(NCCL_VERSION(2, 30, 7));
  old.maxP2pPeers = 3;
  old.graphStreamOrdering = 1;
  const ncclConfig_t cfg = read_old(old);
  EXPECT_EQ(cfg.maxP2pPeers, 3);
  EXPECT_EQ(cfg.graphStreamOrdering, 1);
  EXPECT_EQ(cfg.launchOrderImplicit, kUndef);
}

// As NCCL does: a field the caller's version predates takes its default even inside the
// size (2.30.4 had maxP2pPeers, not yet graphStreamOrdering, in the same 96 bytes).
TEST(CommConfig, FieldsNewerThanTheVersionTakeDefaults) {
  auto old = initialized<Config230>(NCCL_VERSION(2, 30, 4));
  old.maxP2pPeers = 3;
  old.graphStreamOrdering = 7;  // padding in 2.30.4's struct
  const ncclConfig_t cfg = read_old(old);
  EXPECT_EQ(cfg.maxP2pPeers, 3);
  EXPECT_EQ(cfg.graphStreamOrdering, kUndef);
}

TEST(CommConfig, Layout232ReadsEveryField) {
  ncclConfig_t user = NCCL_CONFIG_INITIALIZER;
  int v = 1;
  for (const ConfigField& f : config_fields())
    if (f.kind == ConfigField::Kind::kInt) std::memcpy(reinterpret_cast<char*>(&user) + f.offset, &v, sizeof(int));
  user.nvlsHostMode = 9;
  user.netName = "IB";
  ncclConfig_t cfg = defaults();
  ASSERT_EQ(read_comm_config(kFn, user, &cfg), ncclSuccess);
  for (const ConfigField& f : config_fields()) {
    if (std::string(f.name) == "commName") continue;
    EXPECT_TRUE(field_is_set(cfg, f)) << f.name;
  }
  EXPECT_EQ(cfg.nvlsHostMode, 9);
  EXPECT_EQ(cfg.hostCftMode, 1);
  EXPECT_STREQ(cfg.netName, "IB");
}

// Split and shrink start from the parent's config: what the caller leaves unset stays the parent's.
TEST(CommConfig, UnsetFieldsKeepTheParents) {
  ncclConfig_t parent = defaults();
  parent.blocking = 0;
  parent.graphUsageMode = 2;
  ncclConfig_t user = NCCL_CONFIG_INITIALIZER;
  user.splitShare = 1;
  ASSERT_EQ(read_comm_config("ncclCommSplit", user, &parent), ncclSuccess);
  EXPECT_EQ(parent.blocking, 0);
  EXPECT_EQ(parent.graphUsageMode, 2);
  EXPECT_EQ(parent.splitShare, 1);
}

ncclConfig_t everything_set() {
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  int v = 11;
  for (const ConfigField& f : config_fields())
    if (f.kind == ConfigField::Kind::kInt) std::memcpy(reinterpret_cast<char*>(&cfg) + f.offset, &v, sizeof(int));
  cfg.netName = "Socket";
  cfg.commName = "pg0";
  return cfg;
}

// A real NCCL 2.28 gets an 80-byte struct of version 2.28 carrying every 2.28 field.
TEST(CommConfig, ForwardedAsA228Struct) {
  const ncclConfig_t cfg = everything_set();
  const ncclConfig_t out = config_for_version(cfg, NCCL_VERSION(2, 28, 9));
  EXPECT_EQ(out.size, 80u);
  EXPECT_EQ(out.version, static_cast<unsigned>(NCCL_VERSION(2, 28, 9)));
  EXPECT_EQ(out.magic, static_cast<unsigned>(NCCL_API_MAGIC));
  Config228 seen;
  std::memcpy(&seen, &out, sizeof(seen));
  EXPECT_EQ(seen.nvlinkCentricSched, 11);
  EXPECT_EQ(seen.blocking, 11);
  EXPECT_STREQ(seen.netName, "Socket");
  EXPECT_STREQ(seen.commName, "pg0");
  EXPECT_EQ(out.graphUsageMode, kUndef) << "a 2.28 struct has no graphUsageMode";
}

TEST(CommConfig, ForwardedAsA229And230Struct) {
  const ncclConfig_t cfg = everything_set();
  const ncclConfig_t in229 = config_for_version(cfg, NCCL_VERSION(2, 29, 3));
  EXPECT_EQ(in229.size, 88u);
  EXPECT_EQ(in229.graphUsageMode, 11);
  EXPECT_EQ(in229.numRmaCtx, 11);
  EXPECT_EQ(in229.maxP2pPeers, kUndef);
  const ncclConfig_t in230 = config_for_version(cfg, NCCL_VERSION(2, 30, 7));
  EXPECT_EQ(in230.size, 96u);
  EXPECT_EQ(in230.version, static_cast<unsigned>(NCCL_VERSION(2, 30, 7)));
  EXPECT_EQ(in230.graphStreamOrdering, 11);
  EXPECT_EQ(in230.launchOrderImplicit, kUndef);
}

// A real NCCL the version of Purlin's headers gets everything; a newer one gets Purlin's
// newest layout, which it reads as an older caller's.
TEST(CommConfig, ForwardedWholeToA232OrNewer) {
  const ncclConfig_t cfg = everything_set();
  for (int real : {NCCL_VERSION(2, 32, 3), NCCL_VERSION(2, 33, 1)}) {
    const ncclConfig_t out = config_for_version(cfg, real);
    EXPECT_EQ(out.size, sizeof(ncclConfig_t));
    EXPECT_EQ(out.version, static_cast<unsigned>(NCCL_VERSION_CODE));
    EXPECT_EQ(std::memcmp(reinterpret_cast<const char*>(&out) + 16, reinterpret_cast<const char*>(&cfg) + 16,
                          offsetof(ncclConfig_t, nvlsHostMode) + sizeof(int) - 16),
              0) << "every field after the header, up to the padding";
  }
}

std::vector<std::string> names(const std::vector<const ConfigField*>& fields) {
  std::vector<std::string> out;
  for (const ConfigField* f : fields) out.emplace_back(f->name);
  return out;
}

TEST(CommConfig, IgnoredFieldsWarnOncePerField) {
  IgnoredFieldWarnings warnings;
  ncclConfig_t cfg = defaults();
  cfg.blocking = 0;             // honored
  cfg.commName = "pg";          // honored
  cfg.graphUsageMode = 1;       // honored
  cfg.minCTAs = 2;              // honored: bounds the CTA budget
  cfg.maxCTAs = 4;              // honored: bounds the CTA budget
  cfg.numRmaCtx = 2;            // forwarded: one-sided calls always run on the real NCCL
  cfg.cgaClusterSize = 2;       // ignored natively
  cfg.maxP2pPeers = 4;          // ignored natively
  EXPECT_EQ(names(warnings.warn(kFn, cfg)), (std::vector<std::string>{"cgaClusterSize", "maxP2pPeers"}));
  EXPECT_TRUE(warnings.warn(kFn, cfg).empty()) << "a second communicator with the same config warns again";
  cfg.hostCftMode = 1;
  EXPECT_EQ(names(warnings.warn(kFn, cfg)), (std::vector<std::string>{"hostCftMode"}));
}

// NCCL's variables set for one test, unset after it.
class CtaVariables : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    ::unsetenv("NCCL_MIN_CTAS");
    ::unsetenv("NCCL_MAX_CTAS");
  }
};

// The bounds of a communicator whose caller's 2.28-layout struct, tagged `version`, sets
// minCTAs 2 and maxCTAs 6.
policy::CtaBounds bounds_from_228_layout(unsigned int version) {
  auto old = initialized<Config228>(version);
  old.minCTAs = 2;
  old.maxCTAs = 6;
  return native_cta_bounds(read_old(old));
}

// A native communicator's CTA bounds come from the caller's config as read by its version:
// NCCL 2.17 added the fields, so an older caller's struct holds something else there.
TEST_F(CtaVariables, BoundsComeFromTheCallersConfig) {
  const policy::CtaBounds b = bounds_from_228_layout(NCCL_VERSION(2, 28, 9));
  EXPECT_EQ(b.min, 2);
  EXPECT_EQ(b.max, 6);
  const policy::CtaBounds older = bounds_from_228_layout(NCCL_VERSION(2, 16, 5));
  EXPECT_EQ(older.min, 0) << "unbounded";
  EXPECT_EQ(older.max, 0) << "unbounded";
  const policy::CtaBounds unset = native_cta_bounds(defaults());
  EXPECT_EQ(unset.min, 0);
  EXPECT_EQ(unset.max, 0);
}

// As in NCCL, a valid NCCL_MIN_CTAS / NCCL_MAX_CTAS replaces the config's value; an invalid
// one is reported and leaves it.
TEST_F(CtaVariables, TheEnvironmentOverridesTheConfig) {
  ncclConfig_t cfg = defaults();
  cfg.minCTAs = 2;
  cfg.maxCTAs = 6;
  ::setenv("NCCL_MAX_CTAS", "4", 1);
  ::setenv("NCCL_MIN_CTAS", "0", 1);
  const policy::CtaBounds b = native_cta_bounds(cfg);
  EXPECT_EQ(b.min, 2);
  EXPECT_EQ(b.max, 4);
  ::setenv("NCCL_MAX_CTAS", "four", 1);
  EXPECT_EQ(native_cta_bounds(cfg).max, 6);
}

}  // namespace
}  // namespace purlin::shim
