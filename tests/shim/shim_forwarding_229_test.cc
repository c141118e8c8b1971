// Forwarding of the entry points NCCL 2.29-2.32 added (the ncclXConfig collectives are in
// shim_forwarding_config_test.cc): communicator properties and memory, windows, the device
// API's new host functions, one-sided calls, parameters and encryption. Each reaches the
// real NCCL with its arguments intact, on the real communicator, and the real result comes
// back; what Purlin answers itself never reaches it (fixture and method: forwarding_fixture.h).
#include "forwarding_fixture.h"
#include "nccl_api.h"

namespace forwarding {
namespace {

ncclCommProperties_t properties(size_t size = sizeof(ncclCommProperties_t)) {
  ncclCommProperties_t p{};
  p.size = size;
  p.magic = NCCL_API_MAGIC;
  p.version = NCCL_VERSION_CODE;
  return p;
}

// ---- Communicator properties and memory -------------------------------------------------

// A forwarded communicator runs on the real NCCL, so its properties are the real one's.
TEST_F(Forwarding, QueryPropertiesOfAForwardedCommunicatorAreTheRealOnes) {
  ncclCommProperties_t props = properties();
  ASSERT_EQ(ncclCommQueryProperties(comm_, &props), ncclSuccess);
  auto c = last("CommQueryProperties");
  expect_args(c, {{"props", hex(&props)}, {"props.size", str(sizeof(props))}, {"props.magic", str(NCCL_API_MAGIC)}});
  expect_on_real_comm(c, real_comm());
  EXPECT_EQ(props.nvmlDev, 77) << "not the fake's answer";
  EXPECT_TRUE(props.deviceApiSupport);
  fake_.set_result("CommQueryProperties", kFakeError);
  EXPECT_EQ(ncclCommQueryProperties(comm_, &props), kFakeError);
}

TEST_F(Forwarding, QueryPropertiesRefusesAStructNotMadeByItsInitializer) {
  ncclCommProperties_t props = properties();
  props.magic = 0;
  EXPECT_EQ(ncclCommQueryProperties(comm_, &props), ncclInvalidUsage);
  EXPECT_EQ(ncclCommQueryProperties(comm_, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

TEST_F(Forwarding, SuspendAndResumeReachTheRealCommunicator) {
  std::string rc = make_real_comm();
  ASSERT_EQ(ncclCommSuspend(comm_, NCCL_SUSPEND_MEM), ncclSuccess);
  auto suspend = last("CommSuspend");
  EXPECT_EQ(suspend.arg("flags"), str(NCCL_SUSPEND_MEM)) << suspend.line;
  expect_on_real_comm(suspend, rc);
  fake_.set_result("CommResume", kFakeError);
  EXPECT_EQ(ncclCommResume(comm_), kFakeError);
  expect_on_real_comm(last("CommResume"), rc);
  fake_.set_result("CommSuspend", kFakeError);
  EXPECT_EQ(ncclCommSuspend(comm_, NCCL_SUSPEND_MEM), kFakeError);
}

// Without a real communicator nothing can be suspended but the state is kept, as NCCL's.
TEST_F(Forwarding, SuspendWithoutARealCommunicatorIsPurlinsAlone) {
  uint64_t value = 99;
  ASSERT_EQ(ncclCommSuspend(comm_, NCCL_SUSPEND_MEM), ncclSuccess);
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 1u);
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemSuspend, &value), ncclSuccess);
  EXPECT_EQ(value, 0u) << "Purlin has no suspendable memory";
  ASSERT_EQ(ncclCommResume(comm_), ncclSuccess);
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 0u);
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemTotal, &value), ncclSuccess);
  EXPECT_EQ(value, 0u) << "a forwarded communicator has no native device state";
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// The fake reports 1000 + the statistic for its share.
TEST_F(Forwarding, MemStatsAddTheRealCommunicatorsShare) {
  std::string rc = make_real_comm();
  uint64_t value = 0;
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemTotal, &value), ncclSuccess);
  EXPECT_EQ(value, 1003u);
  auto c = last("CommMemStats");
  EXPECT_EQ(c.arg("stat"), str(ncclStatGpuMemTotal)) << c.line;
  expect_on_real_comm(c, rc);
  ASSERT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemSuspended, &value), ncclSuccess);
  EXPECT_EQ(value, 1001u) << "with a real communicator, whether memory is suspended is its answer";
  fake_.set_result("CommMemStats", kFakeError);
  EXPECT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemPersist, &value), kFakeError);
  EXPECT_EQ(ncclCommMemStats(comm_, static_cast<ncclCommMemStat_t>(7), &value), ncclInvalidArgument);
  EXPECT_EQ(ncclCommMemStats(comm_, ncclStatGpuMemTotal, nullptr), ncclInvalidArgument);
}

// ---- Windows ------------------------------------------------------------------------------

TEST_F(Forwarding, UserPointerOfARealWindowIsTheRealNcclsAnswer) {
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm_, g_recv, 8192, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  void* user = nullptr;
  ASSERT_EQ(ncclWinGetUserPtr(comm_, win, &user), ncclSuccess);
  auto c = last("WinGetUserPtr");
  expect_args(c, {{"win", hex(win)}, {"out", hex(user)}});
  expect_on_real_comm(c, real_comm());
  fake_.set_result("WinGetUserPtr", kFakeError);
  EXPECT_EQ(ncclWinGetUserPtr(comm_, win, &user), kFakeError);
  // A window this communicator never registered is refused before the real NCCL.
  fake_.reset();
  EXPECT_EQ(ncclWinGetUserPtr(comm_, reinterpret_cast<ncclWindow_t>(g_send), &user), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// The real NCCL's window, so the real NCCL's mappings; the fake answers window + offset +
// 0x1000 * which, and LE ids 51-53.
TEST_F(Forwarding, WindowDevicePointersAreTheRealNcclsOwn) {
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm_, g_recv, 16384, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  const auto base = reinterpret_cast<uintptr_t>(win);
  void* p = nullptr;
  ASSERT_EQ(ncclGetLsaMultimemDevicePointer(win, 16, &p), ncclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p), base + 16 + 0x1000);
  expect_args(last("GetLsaMultimemDevicePointer"), {{"window", hex(win)}, {"offset", "16"}});
  ncclMultimemHandle_t mm{};
  mm.mcBasePtr = g_send;
  ASSERT_EQ(ncclGetMultimemDevicePointer(win, 32, mm, &p), ncclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p), base + 32 + 0x2000);
  expect_args(last("GetMultimemDevicePointer"), {{"multimem.mcBasePtr", hex(g_send)}, {"offset", "32"}});
  ASSERT_EQ(ncclGetLsaDevicePointer(win, 48, 0, &p), ncclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p), base + 48 + 0x3000);
  expect_args(last("GetLsaDevicePointer"), {{"lsaRank", "0"}, {"offset", "48"}});
  ASSERT_EQ(ncclGetPeerDevicePointer(win, 64, 0, &p), ncclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p), base + 64 + 0x4000);
  expect_args(last("GetPeerDevicePointer"), {{"peer", "0"}, {"offset", "64"}});

  ncclCftLeId le = 0;
  size_t le_offset = 0;
  ASSERT_EQ(ncclGetMultimemDeviceLeInfo(win, 80, &le, &le_offset), ncclSuccess);
  EXPECT_EQ(le, 51u);
  ncclTeam_t team{1, 0, 1};
  ASSERT_EQ(ncclGetCftDeviceLeInfo(win, 96, 0, team, &le, &le_offset), ncclSuccess);
  EXPECT_EQ(le, 52u);
  expect_args(last("GetCftDeviceLeInfo"), {{"peerCft", "0"}, {"cftTeam.nRanks", "1"}, {"offset", "96"}});
  ASSERT_EQ(ncclGetPeerDeviceLeInfo(win, 112, 0, &le, &le_offset), ncclSuccess);
  EXPECT_EQ(le, 53u);
  EXPECT_EQ(le_offset, 4096u + 53u);

  fake_.set_result("GetPeerDevicePointer", kFakeError);
  fake_.set_result("GetCftDeviceLeInfo", kFakeError);
  EXPECT_EQ(ncclGetPeerDevicePointer(win, 0, 0, &p), kFakeError);
  EXPECT_EQ(ncclGetCftDeviceLeInfo(win, 0, 0, team, &le, &le_offset), kFakeError);
}

// ---- Device API: CFT teams and GIN requirements ---------------------------------------------

TEST_F(Forwarding, CftTeams) {
  ncclTeam_t cft = ncclTeamCft(comm_, NCCL_CFT_TEAM_FLAT);
  std::string rc = real_comm();
  auto c = last("TeamCft");
  EXPECT_EQ(c.arg("mode"), str(NCCL_CFT_TEAM_FLAT)) << c.line;
  expect_on_real_comm(c, rc);
  EXPECT_EQ(cft.stride, 3);
  ncclTeam_t mm = ncclTeamCftMultimem(comm_);
  expect_on_real_comm(last("TeamCftMultimem"), rc);
  EXPECT_EQ(mm.stride, 4);
}

TEST_F(Forwarding, GinScratchRequirements) {
  ncclDevResourceRequirements_t req{};
  auto* outbox = reinterpret_cast<ncclGinOutboxHandle*>(g_send);
  ASSERT_EQ(ncclGinOutboxCreateRequirement(3, 4, outbox, &req), ncclSuccess);
  expect_args(last("GinOutboxCreateRequirement"),
              {{"nBlocks", "3"}, {"size_log2", "4"}, {"outHandle", hex(outbox)}, {"outReq", hex(&req)}});
  EXPECT_EQ(req.bufferSize, (444u * 3u) << 4);
  ncclTeam_t peers{2, 1, 1};
  auto* inbox = reinterpret_cast<ncclGinInboxA2AHandle*>(g_recv);
  ASSERT_EQ(ncclGinInboxA2ACreateRequirement(peers, 5, 6, inbox, &req), ncclSuccess);
  expect_args(last("GinInboxA2ACreateRequirement"),
              {{"peers.nRanks", "2"}, {"peers.rank", "1"}, {"nBlocks", "5"}, {"size_log2", "6"}, {"outHandle", hex(inbox)}});
  EXPECT_EQ(req.ginSignalCount, 5);
  fake_.set_result("GinInboxA2ACreateRequirement", kFakeError);
  EXPECT_EQ(ncclGinInboxA2ACreateRequirement(peers, 5, 6, inbox, &req), kFakeError);
}

// ---- One-sided calls ------------------------------------------------------------------------

TEST_F(Forwarding, PutSignalAndSignal) {
  std::string rc = make_real_comm();
  auto win = reinterpret_cast<ncclWindow_t>(g_recv + 512);
  fake_.set_result("PutSignal", kFakeError);
  EXPECT_EQ(ncclPutSignal(g_send + 8, 1201, ncclFloat16, 0, win, 640, 3, 1, 0, comm_, stream(0x3001)), kFakeError);
  auto put = last("PutSignal");
  expect_args(put, {{"localbuff", hex(g_send + 8)}, {"count", "1201"}, {"datatype", str(ncclFloat16)}, {"peer", "0"},
                    {"peerWin", hex(win)}, {"peerWinOffset", "640"}, {"sigIdx", "3"}, {"ctx", "1"}, {"flags", "0"},
                    {"stream", hex(stream(0x3001))}});
  expect_on_real_comm(put, rc);
  fake_.set_result("Signal", kFakeError);
  EXPECT_EQ(ncclSignal(0, 5, 2, 0, comm_, stream(0x3002)), kFakeError);
  auto sig = last("Signal");
  expect_args(sig, {{"peer", "0"}, {"sigIdx", "5"}, {"ctx", "2"}, {"stream", hex(stream(0x3002))}});
  expect_on_real_comm(sig, rc);
  // The peer is checked like ncclSend's, before the real NCCL.
  fake_.reset();
  EXPECT_EQ(ncclSignal(1, 5, 2, 0, comm_, stream(0x3002)), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// Inside a group a one-sided call waits for ncclGroupEnd like ncclSend, and the descriptor
// array is copied when the call is made: the application may reuse it at once.
TEST_F(Forwarding, WaitSignalInAGroupIsIssuedAtGroupEndWithItsDescriptors) {
  ncclWaitSignalDesc_t descs[2] = {{4, 0, 1, 0}, {6, 0, 2, 1}};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSignal(0, 1, 0, 0, comm_, stream(0x3003)), ncclSuccess);
  ASSERT_EQ(ncclWaitSignal(2, descs, comm_, stream(0x3004)), ncclSuccess);
  descs[1].opCnt = 99;
  EXPECT_TRUE(calls().empty()) << "a grouped call reached the real NCCL before ncclGroupEnd: " << calls()[0].line;
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  std::vector<std::string> names;
  for (const LoggedCall& c : calls()) {
    if (c.name != "GetUniqueId" && c.name != "CommInitRank" && c.name != "CommInitRankConfig") names.push_back(c.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"GroupStart", "Signal", "WaitSignal", "GroupEnd"}));
  auto wait = last("WaitSignal");
  expect_args(wait, {{"nDesc", "2"}, {"signalDescs[0].opCnt", "4"}, {"signalDescs[0].sigIdx", "1"},
                     {"signalDescs[1].opCnt", "6"}, {"signalDescs[1].ctx", "1"}, {"stream", hex(stream(0x3004))}});
  expect_on_real_comm(wait, real_comm());

  fake_.reset();
  descs[0].peer = 3;
  EXPECT_EQ(ncclWaitSignal(2, descs, comm_, stream(0x3005)), ncclInvalidArgument);
  EXPECT_EQ(ncclWaitSignal(1, nullptr, comm_, stream(0x3005)), ncclInvalidArgument);
  EXPECT_EQ(ncclWaitSignal(-1, descs, comm_, stream(0x3005)), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// ---- Parameters and encryption ----------------------------------------------------------------

// The parameters are the real NCCL's: handles, values and strings are its own.
TEST_F(Forwarding, ParametersAreTheRealNcclsOwn) {
  ncclParamHandle_t h = nullptr;
  ASSERT_EQ(ncclParamBind(&h, "NCCL_PROTO"), ncclSuccess);
  auto bind = last("ParamBind");
  expect_args(bind, {{"key", "NCCL_PROTO"}, {"handle", hex(h)}});
  int8_t i8 = 0;
  int16_t i16 = 0;
  int32_t i32 = 0;
  int64_t i64 = 0;
  uint8_t u8 = 0;
  uint16_t u16 = 0;
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  ASSERT_EQ(ncclParamGetI8(h, &i8), ncclSuccess);
  ASSERT_EQ(ncclParamGetI16(h, &i16), ncclSuccess);
  ASSERT_EQ(ncclParamGetI32(h, &i32), ncclSuccess);
  ASSERT_EQ(ncclParamGetI64(h, &i64), ncclSuccess);
  ASSERT_EQ(ncclParamGetU8(h, &u8), ncclSuccess);
  ASSERT_EQ(ncclParamGetU16(h, &u16), ncclSuccess);
  ASSERT_EQ(ncclParamGetU32(h, &u32), ncclSuccess);
  ASSERT_EQ(ncclParamGetU64(h, &u64), ncclSuccess);
  EXPECT_EQ(i8, -8);
  EXPECT_EQ(i16, -16);
  EXPECT_EQ(i32, -32);
  EXPECT_EQ(i64, -64);
  EXPECT_EQ(u8, 8u);
  EXPECT_EQ(u16, 16u);
  EXPECT_EQ(u32, 32u);
  EXPECT_EQ(u64, 64u);
  for (const char* name : {"ParamGetI8", "ParamGetI16", "ParamGetI32", "ParamGetI64", "ParamGetU8", "ParamGetU16",
                           "ParamGetU32", "ParamGetU64"}) {
    EXPECT_EQ(last(name).arg("h"), hex(h)) << name;
  }
  const char* text = nullptr;
  ASSERT_EQ(ncclParamGetStr(h, &text), ncclSuccess);
  EXPECT_STREQ(text, "fake-param-string");
  char raw[8] = {};
  int len = 0;
  ASSERT_EQ(ncclParamGet(h, raw, 3, &len), ncclSuccess);
  EXPECT_EQ(len, 3);
  EXPECT_EQ(std::string(raw, 3), "fak");
  expect_args(last("ParamGet"), {{"maxLen", "3"}, {"out", hex(raw)}});
  const char* value = nullptr;
  ASSERT_EQ(ncclParamGetParameter("NCCL_ALGO", &value, &len), ncclSuccess);
  EXPECT_STREQ(value, "fake-value");
  EXPECT_EQ(last("ParamGetParameter").arg("key"), "NCCL_ALGO");
  const char** keys = nullptr;
  ASSERT_EQ(ncclParamGetAllParameterKeys(&keys, &len), ncclSuccess);
  ASSERT_EQ(len, 2);
  EXPECT_STREQ(keys[1], "FAKE_NCCL_B");
  ncclParamDumpAll();
  EXPECT_EQ(fake_.calls_named("ParamDumpAll").size(), 1u);
  fake_.set_result("ParamGetI32", kFakeError);
  EXPECT_EQ(ncclParamGetI32(h, &i32), kFakeError);
}

// Plaintext is what Purlin's bootstrap uses anyway; a key it could only half honor is refused.
TEST_F(Forwarding, EncryptionOnlyAsPlaintext) {
  ncclEncryptionConfig_t config = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  fake_.set_result("SetEncryption", kFakeError);
  EXPECT_EQ(ncclSetEncryption(&config), kFakeError);
  expect_args(last("SetEncryption"), {{"config.mode", str(NCCL_ENCRYPTION_MODE_NONE)},
                                      {"config.size", str(sizeof(config))}});
  fake_.reset();
  config.mode = NCCL_ENCRYPTION_MODE_PSK;
  config.psk = "secret";
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidUsage);
  config.mode = 7;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  config.mode = NCCL_ENCRYPTION_MODE_NONE;
  config.magic = 0;
  EXPECT_EQ(ncclSetEncryption(&config), ncclInvalidArgument);
  EXPECT_EQ(ncclSetEncryption(nullptr), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// ---- Purlin's own: growing a communicator ---------------------------------------------------

// A communicator is always Purlin's, so is its grow id: the real NCCL never sees either.
TEST_F(Forwarding, GrowIdIsPurlinsOwn) {
  ncclUniqueId id{};
  ASSERT_EQ(ncclCommGetUniqueId(comm_, &id), ncclSuccess);
  EXPECT_EQ(ncclCommGetUniqueId(comm_, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
  // It is an id ncclCommInitRank accepts.
  ncclComm_t other = nullptr;
  ASSERT_EQ(ncclCommInitRank(&other, 1, id, 0), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(other), ncclSuccess);
}

}  // namespace
}  // namespace forwarding
