// Purlin in front of a real NCCL older than its ABI: libfake_nccl_228.so has NCCL 2.28's
// entry points only. Every function NCCL 2.29-2.32 added must then fail with
// ncclInvalidUsage and exactly one WARN naming it (and the real NCCL's version), never an
// unresolved symbol or a crash, unless Purlin can serve the call itself: its own
// communicators' grow ids, suspension without a real communicator, a per-collective config
// the plain call serves, plaintext "encryption".
#include <functional>
#include <sstream>

#include "common/warn_lines.h"
#include "forwarding_fixture.h"
#include "nccl_api.h"

namespace forwarding {
namespace {

class OlderNccl : public Forwarding {
 protected:
  int expected_version() const override { return FAKE_NCCL_228_VERSION; }
};

// Purlin's WARN lines `call` writes on stderr.
std::vector<std::string> warnings_of(const std::function<void()>& call) {
  testing::internal::CaptureStderr();
  call();
  std::istringstream err(testing::internal::GetCapturedStderr());
  std::vector<std::string> lines;
  for (std::string line; std::getline(err, line);) {
    if (purlin::test::is_purlin_warn(line)) lines.push_back(line);
  }
  return lines;
}

void expect_one_warning_naming(const std::vector<std::string>& warnings, const std::string& fn) {
  ASSERT_EQ(warnings.size(), 1u) << fn << ": " << (warnings.empty() ? "no WARN" : warnings[1]);
  EXPECT_NE(warnings[0].find(fn + ":"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("2.28.99"), std::string::npos) << "the WARN must name the real version: " << warnings[0];
}

struct Case {
  const char* fn;
  std::function<ncclResult_t()> call;
};

TEST_F(OlderNccl, EveryNewerFunctionFailsCleanlyWithOneWarning) {
  make_real_comm();
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm_, g_recv, 4096, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  ncclComm_t c = comm_;
  ncclCommProperties_t props{};
  props.size = sizeof(props);
  props.magic = NCCL_API_MAGIC;
  props.version = NCCL_VERSION_CODE;
  uint64_t u64 = 0;
  void* ptr = nullptr;
  ncclCftLeId le = 0;
  size_t le_offset = 0;
  ncclTeam_t team{1, 0, 1};
  ncclDevResourceRequirements_t req{};
  ncclWaitSignalDesc_t wait{1, 0, 0, 0};
  auto h = reinterpret_cast<ncclParamHandle_t>(g_send);
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
  uint16_t u16;
  uint32_t u32;
  const char* text = nullptr;
  const char** keys = nullptr;
  int len = 0;
  // A forced algorithm selection is what only the real ncclXConfig can serve.
  ncclCollConfig_t forced = NCCL_COLLCONFIG_INITIALIZER;
  forced.algSelection = "ring";
  const ncclCollConfig_t* cfg = &forced;
  cudaStream_t s = stream(0x5001);
  const std::vector<Case> cases = {
      {"ncclCommQueryProperties", [&] { return ncclCommQueryProperties(c, &props); }},
      {"ncclCommSuspend", [&] { return ncclCommSuspend(c, NCCL_SUSPEND_MEM); }},
      {"ncclCommResume", [&] { return ncclCommResume(c); }},
      {"ncclCommMemStats", [&] { return ncclCommMemStats(c, ncclStatGpuMemTotal, &u64); }},
      {"ncclWinGetUserPtr", [&] { return ncclWinGetUserPtr(c, win, &ptr); }},
      {"ncclGetLsaMultimemDevicePointer", [&] { return ncclGetLsaMultimemDevicePointer(win, 0, &ptr); }},
      {"ncclGetMultimemDevicePointer", [&] { return ncclGetMultimemDevicePointer(win, 0, ncclMultimemHandle_t{}, &ptr); }},
      {"ncclGetLsaDevicePointer", [&] { return ncclGetLsaDevicePointer(win, 0, 0, &ptr); }},
      {"ncclGetPeerDevicePointer", [&] { return ncclGetPeerDevicePointer(win, 0, 0, &ptr); }},
      {"ncclGetMultimemDeviceLeInfo", [&] { return ncclGetMultimemDeviceLeInfo(win, 0, &le, &le_offset); }},
      {"ncclGetCftDeviceLeInfo", [&] { return ncclGetCftDeviceLeInfo(win, 0, 0, team, &le, &le_offset); }},
      {"ncclGetPeerDeviceLeInfo", [&] { return ncclGetPeerDeviceLeInfo(win, 0, 0, &le, &le_offset); }},
      {"ncclGinOutboxCreateRequirement",
       [&] { return ncclGinOutboxCreateRequirement(1, 4, reinterpret_cast<ncclGinOutboxHandle*>(g_send), &req); }},
      {"ncclGinInboxA2ACreateRequirement",
       [&] {
         return ncclGinInboxA2ACreateRequirement(team, 1, 4, reinterpret_cast<ncclGinInboxA2AHandle*>(g_send), &req);
       }},
      {"ncclPutSignal", [&] { return ncclPutSignal(g_send, 8, ncclInt8, 0, win, 0, 0, 0, 0, c, s); }},
      {"ncclSignal", [&] { return ncclSignal(0, 0, 0, 0, c, s); }},
      {"ncclWaitSignal", [&] { return ncclWaitSignal(1, &wait, c, s); }},
      {"ncclParamBind", [&] { return ncclParamBind(&h, "NCCL_PROTO"); }},
      {"ncclParamGetI8", [&] { return ncclParamGetI8(h, &i8); }},
      {"ncclParamGetI16", [&] { return ncclParamGetI16(h, &i16); }},
      {"ncclParamGetI32", [&] { return ncclParamGetI32(h, &i32); }},
      {"ncclParamGetI64", [&] { return ncclParamGetI64(h, &i64); }},
      {"ncclParamGetU8", [&] { return ncclParamGetU8(h, &u8); }},
      {"ncclParamGetU16", [&] { return ncclParamGetU16(h, &u16); }},
      {"ncclParamGetU32", [&] { return ncclParamGetU32(h, &u32); }},
      {"ncclParamGetU64", [&] { return ncclParamGetU64(h, &u64); }},
      {"ncclParamGetStr", [&] { return ncclParamGetStr(h, &text); }},
      {"ncclParamGet", [&] { return ncclParamGet(h, g_recv, 8, &len); }},
      {"ncclParamGetParameter", [&] { return ncclParamGetParameter("NCCL_PROTO", &text, &len); }},
      {"ncclParamGetAllParameterKeys", [&] { return ncclParamGetAllParameterKeys(&keys, &len); }},
      {"ncclAllReduceConfig", [&] { return ncclAllReduceConfig(g_send, g_recv, 8, ncclInt8, ncclSum, c, s, cfg); }},
      {"ncclAllGatherConfig", [&] { return ncclAllGatherConfig(g_send, g_recv, 8, ncclInt8, c, s, cfg); }},
      {"ncclReduceScatterConfig",
       [&] { return ncclReduceScatterConfig(g_send, g_recv, 8, ncclInt8, ncclSum, c, s, cfg); }},
      {"ncclAlltoAllConfig", [&] { return ncclAlltoAllConfig(g_send, g_recv, 8, ncclInt8, c, s, cfg); }},
      {"ncclBroadcastConfig", [&] { return ncclBroadcastConfig(g_send, g_recv, 8, ncclInt8, 0, c, s, cfg); }},
      {"ncclReduceConfig", [&] { return ncclReduceConfig(g_send, g_recv, 8, ncclInt8, ncclSum, 0, c, s, cfg); }},
      {"ncclGatherConfig", [&] { return ncclGatherConfig(g_send, g_recv, 8, ncclInt8, 0, c, s, cfg); }},
      {"ncclScatterConfig", [&] { return ncclScatterConfig(g_send, g_recv, 8, ncclInt8, 0, c, s, cfg); }},
  };
  for (const Case& k : cases) {
    ncclResult_t res = ncclSuccess;
    auto warnings = warnings_of([&] { res = k.call(); });
    EXPECT_EQ(res, ncclInvalidUsage) << k.fn;
    expect_one_warning_naming(warnings, k.fn);
    EXPECT_STREQ(ncclGetLastError(c), warnings.empty() ? "" : warnings[0].substr(warnings[0].find(k.fn)).c_str());
  }
  for (const LoggedCall& call : calls()) {
    EXPECT_TRUE(call.name == "CommWindowRegister" || call.name == "GetUniqueId" || call.name == "CommInitRankConfig")
        << "reached the older NCCL: " << call.line;
  }
}

// Value-returning functions: an empty team, or nothing, after the one WARN.
TEST_F(OlderNccl, NewerTeamsAreEmptyAndDumpAllOnlyWarns) {
  ncclTeam_t cft{};
  expect_one_warning_naming(warnings_of([&] { cft = ncclTeamCft(comm_, NCCL_CFT_TEAM_FLAT); }), "ncclTeamCft");
  EXPECT_EQ(cft.nRanks, 0);
  ncclTeam_t mm{};
  expect_one_warning_naming(warnings_of([&] { mm = ncclTeamCftMultimem(comm_); }), "ncclTeamCftMultimem");
  EXPECT_EQ(mm.nRanks, 0);
  expect_one_warning_naming(warnings_of([] { ncclParamDumpAll(); }), "ncclParamDumpAll");
}

// Inside a group the missing function is found when the group issues the call.
TEST_F(OlderNccl, OneSidedCallInAGroupFailsAtGroupEnd) {
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSignal(0, 0, 0, 0, comm_, stream(0x5002)), ncclSuccess);
  ncclResult_t end = ncclSuccess;
  expect_one_warning_naming(warnings_of([&] { end = ncclGroupEnd(); }), "ncclSignal");
  EXPECT_EQ(end, ncclInvalidUsage);
}

// What Purlin serves itself needs nothing of the real NCCL.
TEST_F(OlderNccl, WhatPurlinServesItselfStillWorks) {
  std::vector<std::string> warnings = warnings_of([&] {
    ncclUniqueId id{};
    EXPECT_EQ(ncclCommGetUniqueId(comm_, &id), ncclSuccess);
    // No real communicator yet: nothing of the real NCCL to suspend or to count.
    uint64_t value = 7;
    EXPECT_EQ(ncclCommSuspend(comm_, NCCL_SUSPEND_MEM), ncclSuccess);
    EXPECT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemSuspended, &value), ncclSuccess);
    EXPECT_EQ(value, 1u);
    EXPECT_EQ(ncclCommResume(comm_), ncclSuccess);
    ncclEncryptionConfig_t plaintext = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    EXPECT_EQ(ncclSetEncryption(&plaintext), ncclSuccess);
    // A config the plain call serves (a profiler tag has no effect without a profiler).
    ncclCollConfig_t tagged = NCCL_COLLCONFIG_INITIALIZER;
    tagged.userProfilerTag = 11;
    EXPECT_EQ(ncclAllReduceConfig(g_send, g_recv, 2101, ncclInt8, ncclSum, comm_, stream(0x5003), &tagged),
              ncclSuccess);
    EXPECT_EQ(ncclGatherConfig(g_send, g_recv, 2102, ncclInt8, 0, comm_, stream(0x5004), nullptr), ncclSuccess);
  });
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(last("AllReduce").arg("count"), "2101");
  EXPECT_EQ(last("Gather").arg("count"), "2102");
}

}  // namespace
}  // namespace forwarding
