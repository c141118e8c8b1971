// Forwarding of the ncclXConfig collectives (NCCL 2.31): on a forwarded communicator each
// reaches the real ncclXConfig with its arguments and the caller's config intact, on the real
// communicator; a NULL config is the plain call; a config is read when the call is made
// (fixture and method: forwarding_fixture.h; the rules: nccl_shim/coll_config.h).
#include <cstddef>

#include "forwarding_fixture.h"

namespace forwarding {
namespace {

ncclCollConfig_t config_with_hints() {
  ncclCollConfig_t c = NCCL_COLLCONFIG_INITIALIZER;
  c.minCTAs = 2;
  c.maxCTAs = 9;
  c.algSelection = "ring";
  c.userProfilerTag = 4242;
  return c;
}

// What the fake must log of the config Purlin handed on: a whole struct of this version.
std::vector<std::pair<std::string, std::string>> config_args(const ncclCollConfig_t& config) {
  return {{"config.size", str(sizeof(ncclCollConfig_t))},
          {"config.magic", str(NCCL_API_MAGIC)},
          {"config.minCTAs", str(config.minCTAs)},
          {"config.maxCTAs", str(config.maxCTAs)},
          {"config.algSelection", config.algSelection != nullptr ? config.algSelection : "null"},
          {"config.forceAlgSelection", str(config.forceAlgSelection)},
          {"config.userProfilerTag", str(static_cast<long long>(config.userProfilerTag))}};
}

TEST_F(Forwarding, ConfigCollectivesReachTheRealConfigCalls) {
  std::string rc = make_real_comm();
  const ncclCollConfig_t config = config_with_hints();
  fake_.set_result("*", kFakeError);
  EXPECT_EQ(ncclAllReduceConfig(g_send + 1, g_recv + 1, 2001, ncclFloat32, ncclMin, comm_, stream(0x4001), &config),
            kFakeError);
  EXPECT_EQ(ncclAllGatherConfig(g_send + 2, g_recv + 2, 2002, ncclInt8, comm_, stream(0x4002), &config), kFakeError);
  EXPECT_EQ(ncclReduceScatterConfig(g_send + 3, g_recv + 3, 2003, ncclFloat64, ncclSum, comm_, stream(0x4003), &config),
            kFakeError);
  EXPECT_EQ(ncclAlltoAllConfig(g_send + 4, g_recv + 4, 2004, ncclUint32, comm_, stream(0x4004), &config), kFakeError);
  EXPECT_EQ(ncclBroadcastConfig(g_send + 5, g_recv + 5, 2005, ncclInt64, 0, comm_, stream(0x4005), &config),
            kFakeError);
  EXPECT_EQ(ncclReduceConfig(g_send + 6, g_recv + 6, 2006, ncclBfloat16, ncclMax, 0, comm_, stream(0x4006), &config),
            kFakeError);
  EXPECT_EQ(ncclGatherConfig(g_send + 7, g_recv + 7, 2007, ncclFloat16, 0, comm_, stream(0x4007), &config),
            kFakeError);
  EXPECT_EQ(ncclScatterConfig(g_send + 8, g_recv + 8, 2008, ncclUint8, 0, comm_, stream(0x4008), &config),
            kFakeError);

  struct Expected {
    const char* name;
    const char* count_key;
    int index;
  };
  for (const Expected& e : {Expected{"AllReduceConfig", "count", 1}, Expected{"AllGatherConfig", "sendcount", 2},
                            Expected{"ReduceScatterConfig", "recvcount", 3}, Expected{"AlltoAllConfig", "count", 4},
                            Expected{"BroadcastConfig", "count", 5}, Expected{"ReduceConfig", "count", 6},
                            Expected{"GatherConfig", "count", 7}, Expected{"ScatterConfig", "count", 8}}) {
    auto c = last(e.name);
    expect_args(c, {{"sendbuff", hex(g_send + e.index)}, {"recvbuff", hex(g_recv + e.index)},
                    {e.count_key, str(2000 + e.index)}, {"stream", hex(stream(0x4000 + e.index))}});
    expect_args(c, config_args(config));
    expect_on_real_comm(c, rc);
  }
  expect_args(last("AllReduceConfig"), {{"op", str(ncclMin)}, {"datatype", str(ncclFloat32)}});
  expect_args(last("ReduceConfig"), {{"op", str(ncclMax)}, {"root", "0"}, {"datatype", str(ncclBfloat16)}});
  EXPECT_TRUE(fake_.calls_named("AllReduce").empty()) << "a config call became a plain one";
  fake_.set_result("*", -1);  // the communicator's end must succeed
}

// NCCL defines config == NULL as the plain call.
TEST_F(Forwarding, ConfigCollectiveWithoutConfigIsThePlainCall) {
  std::string rc = make_real_comm();
  ASSERT_EQ(ncclAllReduceConfig(g_send, g_recv, 2010, ncclFloat32, ncclSum, comm_, stream(0x4010), nullptr),
            ncclSuccess);
  EXPECT_TRUE(fake_.calls_named("AllReduceConfig").empty());
  auto c = last("AllReduce");
  EXPECT_EQ(c.arg("count"), "2010") << c.line;
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, ConfigNotMadeByItsInitializerIsRefused) {
  ncclCollConfig_t config = NCCL_COLLCONFIG_INITIALIZER;
  config.magic = 0x1234;
  EXPECT_EQ(ncclAllGatherConfig(g_send, g_recv, 8, ncclInt8, comm_, stream(0x4011), &config), ncclInvalidArgument);
  config.magic = NCCL_API_MAGIC;
  config.size = 4;
  EXPECT_EQ(ncclAllGatherConfig(g_send, g_recv, 8, ncclInt8, comm_, stream(0x4011), &config), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// A 2.31 program's config ends before launchCompletionEvent: Purlin reads only what it has
// and hands the real NCCL a whole struct, the later fields at their defaults.
TEST_F(Forwarding, OlderConfigIsReadByItsSize) {
  std::string rc = make_real_comm();
  struct {
    ncclCollConfig_t config;
    char poison[16];
  } older;
  older.config = config_with_hints();
  older.config.size = offsetof(ncclCollConfig_t, launchCompletionEvent);
  older.config.version = NCCL_VERSION(2, 31, 2);
  older.config.launchCompletionEvent = reinterpret_cast<cudaEvent_t>(0xbad);  // beyond its size
  ASSERT_EQ(ncclBroadcastConfig(g_send, g_recv, 2012, ncclInt8, 0, comm_, stream(0x4012), &older.config), ncclSuccess);
  auto c = last("BroadcastConfig");
  expect_args(c, config_args(older.config));
  expect_args(c, {{"config.version", str(NCCL_VERSION(2, 31, 2))}, {"config.launchCompletionEvent", hex(nullptr)}});
}

// Inside a group the call runs at ncclGroupEnd; the config was copied when it was made.
TEST_F(Forwarding, ConfigInAGroupIsTheOneOfTheCall) {
  ncclCollConfig_t config = config_with_hints();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAlltoAllConfig(g_send, g_recv, 2013, ncclFloat32, comm_, stream(0x4013), &config), ncclSuccess);
  config.maxCTAs = 77;
  config.algSelection = "tree";
  EXPECT_TRUE(calls().empty()) << "a grouped call reached the real NCCL before ncclGroupEnd: " << calls()[0].line;
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  auto c = last("AlltoAllConfig");
  expect_args(c, config_args(config_with_hints()));
  expect_on_real_comm(c, real_comm());
}

}  // namespace
}  // namespace forwarding
