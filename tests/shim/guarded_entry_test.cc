// Every exported function of Purlin's libnccl.so.2 holds under an internal failure: with fault
// injection armed at the start of its body (PURLIN_FAULT_INJECT=entry:1, base/fault.h) each
// one, under both its names, returns ncclInternalError, or the failure value it documents,
// with exactly one WARN naming it, and the process lives on. The table below has one call per
// entry point and the test holds it to the exported list (nccl-2.32.3.symbols and
// purlin/purlin.h), so a new export without a case fails here, as does one without a guard.
//
// Runs in front of the fake NCCL (CMakeLists.txt), so that without the fault every call here
// would be an ordinary call that returns quickly.
#include <dlfcn.h>
#include <purlin/purlin.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/warn_lines.h"
#include "fault_arming.h"
#include "forwarding_fixture.h"
#include "nccl_api.h"

namespace {

using forwarding::Forwarding;
using purlin::test::warn_lines;

// What an entry point returned, as a status: value-returning functions report
// ncclInternalError when they returned their documented failure value, ncclSuccess otherwise.
using Call = std::function<ncclResult_t(void* symbol)>;

constexpr ncclResult_t kFailureValue = ncclInternalError;
// What ncclGetErrorString and ncclGetLastError document for an internal failure.
constexpr const char* kFailureText = "Purlin internal error (see its WARN line)";

template <class F>
F as(void* symbol) {
  return reinterpret_cast<F>(symbol);
}

ncclResult_t team_status(ncclTeam_t t) {
  return t.nRanks == 0 && t.rank == 0 && t.stride == 0 ? kFailureValue : ncclSuccess;
}
ncclResult_t value_status(bool is_failure_value) { return is_failure_value ? kFailureValue : ncclSuccess; }

// The exported names: "ncclX" for every entry point of the list (whose "pncclX" twin, when
// listed, is called as well), ncclResetDebugInitInternal, and the purlinX of the header.
std::vector<std::string> exported_names() {
  std::vector<std::string> names;
  std::ifstream list(PURLIN_NCCL_ABI_FILE);
  std::string binding, name;
  for (std::string line; std::getline(list, line);) {
    std::istringstream fields(line);
    if (!(fields >> binding >> name) || (binding != "T" && binding != "W")) continue;
    names.push_back(name);
  }
  std::ifstream header(PURLIN_PUBLIC_HEADER);
  const std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  const std::regex decl(R"(\b(purlin[A-Za-z0-9_]*)\s*\()");
  std::set<std::string> purlin;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
    purlin.insert((*it)[1]);
  names.insert(names.end(), purlin.begin(), purlin.end());
  return names;
}

class GuardedEntry : public Forwarding {
 protected:
  void SetUp() override {
    Forwarding::SetUp();
    // The teardown calls get a communicator of their own: were a guard missing, they would
    // end that one, not the one every other call uses.
    ASSERT_EQ(ncclCommInitAll(&spare_, 1, nullptr), ncclSuccess);
    Dl_info info{};
    ASSERT_NE(dladdr(reinterpret_cast<void*>(&pncclGetVersion), &info), 0);
    purlin_ = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    ASSERT_NE(purlin_, nullptr) << info.dli_fname;
  }
  void TearDown() override {
    purlin::test::disarm_faults();
    if (purlin_ != nullptr) dlclose(purlin_);
    EXPECT_EQ(ncclCommDestroy(spare_), ncclSuccess);
    Forwarding::TearDown();
  }

  std::map<std::string, Call> cases();

  void* purlin_ = nullptr;  // Purlin's libnccl.so.2, where the names are looked up
  ncclComm_t spare_ = nullptr;
};

std::map<std::string, Call> GuardedEntry::cases() {
  using forwarding::g_recv;
  using forwarding::g_send;
  const ncclComm_t c = comm_, spare = spare_;
  const ncclUniqueId used_id = id_;  // already joined: without the guard InitRank fails fast
  void* s = g_send;
  void* r = g_recv;
  const cudaStream_t st = forwarding::stream(0x77);
  const auto kT = ncclFloat32;
  const auto win = reinterpret_cast<ncclWindow_t>(g_recv);
  const ncclTeam_t team{1, 0, 1};
  static const size_t four[1] = {4};
  static ncclComm_t out;
  static ncclComm_t outs[1];
  static ncclUniqueId id;
  static int i;
  static int8_t i8;
  static int16_t i16;
  static int32_t i32;
  static int64_t i64;
  static uint8_t u8;
  static uint16_t u16;
  static uint32_t u32;
  static uint64_t u64;
  static const char* str;
  static const char** keys;
  static void* ptr;
  static void* handle;
  static size_t offset;
  static ncclResult_t async;
  static ncclRedOp_t op;
  static float scalar = 2.0f;
  static ncclWindow_t new_win;
  static ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  static ncclCommProperties_t props = NCCL_COMM_PROPERTIES_INITIALIZER;
  static ncclDevComm_t dev_comm;
  static ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  static ncclDevResourceRequirements_t res_req;
  static ncclLsaBarrierHandle_t lsa_barrier;
  static ncclGinBarrierHandle_t gin_barrier;
  static ncclLLA2AHandle_t lla2a;
  static ncclParamHandle_t param;
  static ncclCftLeId le;
  static const ncclEncryptionConfig_t plaintext = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  auto* outbox = reinterpret_cast<ncclGinOutboxHandle*>(g_send);
  auto* inbox = reinterpret_cast<ncclGinInboxA2AHandle*>(g_recv);
  return {
      // Version, errors, debug, groups, operators.
      {"ncclGetVersion", [](void* f) { return as<decltype(&pncclGetVersion)>(f)(&i); }},
      {"ncclGetErrorString",
       [](void* f) { return value_status(as<decltype(&pncclGetErrorString)>(f)(ncclSuccess) == std::string(kFailureText)); }},
      {"ncclGetLastError",
       [=](void* f) { return value_status(as<decltype(&pncclGetLastError)>(f)(c) == std::string(kFailureText)); }},
      {"ncclResetDebugInit", [](void* f) {
         as<decltype(&pncclResetDebugInit)>(f)();
         return kFailureValue;
       }},
      {"ncclResetDebugInitInternal", [](void* f) {
         as<void (*)()>(f)();
         return kFailureValue;
       }},
      {"ncclGroupStart", [](void* f) { return as<decltype(&pncclGroupStart)>(f)(); }},
      {"ncclGroupEnd", [](void* f) { return as<decltype(&pncclGroupEnd)>(f)(); }},
      {"ncclGroupSimulateEnd", [](void* f) { return as<decltype(&pncclGroupSimulateEnd)>(f)(&sim); }},
      {"ncclRedOpCreatePreMulSum",
       [=](void* f) { return as<decltype(&pncclRedOpCreatePreMulSum)>(f)(&op, &scalar, kT, ncclScalarHostImmediate, c); }},
      {"ncclRedOpDestroy", [=](void* f) { return as<decltype(&pncclRedOpDestroy)>(f)(ncclSum, c); }},
      // Communicators.
      {"ncclGetUniqueId", [](void* f) { return as<decltype(&pncclGetUniqueId)>(f)(&id); }},
      {"ncclCommInitRank", [=](void* f) { return as<decltype(&pncclCommInitRank)>(f)(&out, 1, used_id, 0); }},
      {"ncclCommInitRankConfig",
       [=](void* f) { return as<decltype(&pncclCommInitRankConfig)>(f)(&out, 1, used_id, 0, nullptr); }},
      {"ncclCommInitRankScalable", [=](void* f) {
         ncclUniqueId ids[1] = {used_id};
         return as<decltype(&pncclCommInitRankScalable)>(f)(&out, 1, 0, 1, ids, nullptr);
       }},
      {"ncclCommInitAll", [](void* f) { return as<decltype(&pncclCommInitAll)>(f)(outs, 1, nullptr); }},
      {"ncclCommSplit",
       [=](void* f) { return as<decltype(&pncclCommSplit)>(f)(c, NCCL_SPLIT_NOCOLOR, 0, &out, nullptr); }},
      {"ncclCommShrink",
       [=](void* f) { return as<decltype(&pncclCommShrink)>(f)(c, nullptr, 0, &out, nullptr, NCCL_SHRINK_DEFAULT); }},
      {"ncclCommGetUniqueId", [=](void* f) { return as<decltype(&pncclCommGetUniqueId)>(f)(c, nullptr); }},
      {"ncclCommGrow", [=](void* f) { return as<decltype(&pncclCommGrow)>(f)(c, 1, nullptr, -1, &out, nullptr); }},
      {"ncclCommQueryProperties", [=](void* f) { return as<decltype(&pncclCommQueryProperties)>(f)(c, &props); }},
      {"ncclCommFinalize", [=](void* f) { return as<decltype(&pncclCommFinalize)>(f)(spare); }},
      {"ncclCommDestroy", [=](void* f) { return as<decltype(&pncclCommDestroy)>(f)(spare); }},
      {"ncclCommAbort", [=](void* f) { return as<decltype(&pncclCommAbort)>(f)(spare); }},
      {"ncclCommRevoke", [=](void* f) { return as<decltype(&pncclCommRevoke)>(f)(spare, NCCL_REVOKE_DEFAULT); }},
      {"ncclCommGetAsyncError", [=](void* f) { return as<decltype(&pncclCommGetAsyncError)>(f)(c, &async); }},
      {"ncclCommCount", [=](void* f) { return as<decltype(&pncclCommCount)>(f)(c, &i); }},
      {"ncclCommCuDevice", [=](void* f) { return as<decltype(&pncclCommCuDevice)>(f)(c, &i); }},
      {"ncclCommUserRank", [=](void* f) { return as<decltype(&pncclCommUserRank)>(f)(c, &i); }},
      {"ncclCommSuspend", [=](void* f) { return as<decltype(&pncclCommSuspend)>(f)(c, 0); }},
      {"ncclCommResume", [=](void* f) { return as<decltype(&pncclCommResume)>(f)(c); }},
      {"ncclCommMemStats", [=](void* f) { return as<decltype(&pncclCommMemStats)>(f)(c, ncclStatGpuMemTotal, &u64); }},
      // Memory, registration, windows.
      {"ncclMemAlloc", [](void* f) { return as<decltype(&pncclMemAlloc)>(f)(&ptr, 0); }},
      {"ncclMemFree", [=](void* f) { return as<decltype(&pncclMemFree)>(f)(r); }},
      {"ncclCommRegister", [=](void* f) { return as<decltype(&pncclCommRegister)>(f)(c, s, 64, &handle); }},
      {"ncclCommDeregister", [=](void* f) { return as<decltype(&pncclCommDeregister)>(f)(c, r); }},
      {"ncclCommWindowRegister",
       [=](void* f) { return as<decltype(&pncclCommWindowRegister)>(f)(c, s, 64, &new_win, 0); }},
      {"ncclCommWindowDeregister", [=](void* f) { return as<decltype(&pncclCommWindowDeregister)>(f)(c, win); }},
      {"ncclWinGetUserPtr", [=](void* f) { return as<decltype(&pncclWinGetUserPtr)>(f)(c, win, &ptr); }},
      {"ncclGetLsaMultimemDevicePointer",
       [=](void* f) { return as<decltype(&pncclGetLsaMultimemDevicePointer)>(f)(win, 0, &ptr); }},
      {"ncclGetMultimemDevicePointer",
       [=](void* f) { return as<decltype(&pncclGetMultimemDevicePointer)>(f)(win, 0, ncclMultimemHandle_t{}, &ptr); }},
      {"ncclGetLsaDevicePointer", [=](void* f) { return as<decltype(&pncclGetLsaDevicePointer)>(f)(win, 0, 0, &ptr); }},
      {"ncclGetPeerDevicePointer",
       [=](void* f) { return as<decltype(&pncclGetPeerDevicePointer)>(f)(win, 0, 0, &ptr); }},
      {"ncclGetMultimemDeviceLeInfo",
       [=](void* f) { return as<decltype(&pncclGetMultimemDeviceLeInfo)>(f)(win, 0, &le, &offset); }},
      {"ncclGetCftDeviceLeInfo",
       [=](void* f) { return as<decltype(&pncclGetCftDeviceLeInfo)>(f)(win, 0, 0, team, &le, &offset); }},
      {"ncclGetPeerDeviceLeInfo",
       [=](void* f) { return as<decltype(&pncclGetPeerDeviceLeInfo)>(f)(win, 0, 0, &le, &offset); }},
      // The device API's host half.
      {"ncclDevCommCreate", [=](void* f) { return as<decltype(&pncclDevCommCreate)>(f)(c, &reqs, &dev_comm); }},
      {"ncclDevCommDestroy", [=](void* f) { return as<decltype(&pncclDevCommDestroy)>(f)(c, &dev_comm); }},
      {"ncclTeamWorld", [=](void* f) { return team_status(as<decltype(&pncclTeamWorld)>(f)(c)); }},
      {"ncclTeamLsa", [=](void* f) { return team_status(as<decltype(&pncclTeamLsa)>(f)(c)); }},
      {"ncclTeamRail", [=](void* f) { return team_status(as<decltype(&pncclTeamRail)>(f)(c)); }},
      {"ncclTeamCft", [=](void* f) { return team_status(as<decltype(&pncclTeamCft)>(f)(c, NCCL_CFT_TEAM_FLAT)); }},
      {"ncclTeamCftMultimem", [=](void* f) { return team_status(as<decltype(&pncclTeamCftMultimem)>(f)(c)); }},
      {"ncclTeamRankToWorld",
       [=](void* f) { return value_status(as<decltype(&pncclTeamRankToWorld)>(f)(c, team, 0) == -1); }},
      {"ncclTeamRankToLsa",
       [=](void* f) { return value_status(as<decltype(&pncclTeamRankToLsa)>(f)(c, team, 0) == -1); }},
      {"ncclLsaBarrierCreateRequirement", [=](void* f) {
         return as<decltype(&pncclLsaBarrierCreateRequirement)>(f)(team, 1, &lsa_barrier, &res_req);
       }},
      {"ncclGinBarrierCreateRequirement", [=](void* f) {
         return as<decltype(&pncclGinBarrierCreateRequirement)>(f)(c, team, 1, &gin_barrier, &res_req);
       }},
      {"ncclLLA2ACalcSlots", [](void* f) { return value_status(as<decltype(&pncclLLA2ACalcSlots)>(f)(4, 4) == 0); }},
      {"ncclLLA2ACreateRequirement",
       [](void* f) { return as<decltype(&pncclLLA2ACreateRequirement)>(f)(1, 1, &lla2a, &res_req); }},
      {"ncclGinOutboxCreateRequirement",
       [=](void* f) { return as<decltype(&pncclGinOutboxCreateRequirement)>(f)(1, 4, outbox, &res_req); }},
      {"ncclGinInboxA2ACreateRequirement",
       [=](void* f) { return as<decltype(&pncclGinInboxA2ACreateRequirement)>(f)(team, 1, 4, inbox, &res_req); }},
      // Process-wide settings.
      {"ncclParamBind", [](void* f) { return as<decltype(&pncclParamBind)>(f)(&param, "NCCL_PROTO"); }},
      {"ncclParamGetI8", [](void* f) { return as<decltype(&pncclParamGetI8)>(f)(param, &i8); }},
      {"ncclParamGetI16", [](void* f) { return as<decltype(&pncclParamGetI16)>(f)(param, &i16); }},
      {"ncclParamGetI32", [](void* f) { return as<decltype(&pncclParamGetI32)>(f)(param, &i32); }},
      {"ncclParamGetI64", [](void* f) { return as<decltype(&pncclParamGetI64)>(f)(param, &i64); }},
      {"ncclParamGetU8", [](void* f) { return as<decltype(&pncclParamGetU8)>(f)(param, &u8); }},
      {"ncclParamGetU16", [](void* f) { return as<decltype(&pncclParamGetU16)>(f)(param, &u16); }},
      {"ncclParamGetU32", [](void* f) { return as<decltype(&pncclParamGetU32)>(f)(param, &u32); }},
      {"ncclParamGetU64", [](void* f) { return as<decltype(&pncclParamGetU64)>(f)(param, &u64); }},
      {"ncclParamGetStr", [](void* f) { return as<decltype(&pncclParamGetStr)>(f)(param, &str); }},
      {"ncclParamGet", [](void* f) { return as<decltype(&pncclParamGet)>(f)(param, &i64, 8, &i); }},
      {"ncclParamGetParameter",
       [](void* f) { return as<decltype(&pncclParamGetParameter)>(f)("NCCL_PROTO", &str, &i); }},
      {"ncclParamGetAllParameterKeys",
       [](void* f) { return as<decltype(&pncclParamGetAllParameterKeys)>(f)(&keys, &i); }},
      {"ncclParamDumpAll", [](void* f) {
         as<decltype(&pncclParamDumpAll)>(f)();
         return kFailureValue;
       }},
      {"ncclSetEncryption", [](void* f) { return as<decltype(&pncclSetEncryption)>(f)(&plaintext); }},
      // Collectives, point to point, one-sided.
      {"ncclAllReduce",
       [=](void* f) { return as<decltype(&pncclAllReduce)>(f)(s, r, 4, kT, ncclSum, c, st); }},
      {"ncclAllGather", [=](void* f) { return as<decltype(&pncclAllGather)>(f)(s, r, 4, kT, c, st); }},
      {"ncclReduceScatter",
       [=](void* f) { return as<decltype(&pncclReduceScatter)>(f)(s, r, 4, kT, ncclSum, c, st); }},
      {"ncclAlltoAll", [=](void* f) { return as<decltype(&pncclAlltoAll)>(f)(s, r, 4, kT, c, st); }},
      {"ncclBroadcast", [=](void* f) { return as<decltype(&pncclBroadcast)>(f)(s, r, 4, kT, 0, c, st); }},
      {"ncclBcast", [=](void* f) { return as<decltype(&pncclBcast)>(f)(r, 4, kT, 0, c, st); }},
      {"ncclReduce", [=](void* f) { return as<decltype(&pncclReduce)>(f)(s, r, 4, kT, ncclSum, 0, c, st); }},
      {"ncclGather", [=](void* f) { return as<decltype(&pncclGather)>(f)(s, r, 4, kT, 0, c, st); }},
      {"ncclScatter", [=](void* f) { return as<decltype(&pncclScatter)>(f)(s, r, 4, kT, 0, c, st); }},
      {"ncclSend", [=](void* f) { return as<decltype(&pncclSend)>(f)(s, 4, kT, 0, c, st); }},
      {"ncclRecv", [=](void* f) { return as<decltype(&pncclRecv)>(f)(r, 4, kT, 0, c, st); }},
      {"ncclAllReduceConfig",
       [=](void* f) { return as<decltype(&pncclAllReduceConfig)>(f)(s, r, 4, kT, ncclSum, c, st, nullptr); }},
      {"ncclAllGatherConfig",
       [=](void* f) { return as<decltype(&pncclAllGatherConfig)>(f)(s, r, 4, kT, c, st, nullptr); }},
      {"ncclReduceScatterConfig",
       [=](void* f) { return as<decltype(&pncclReduceScatterConfig)>(f)(s, r, 4, kT, ncclSum, c, st, nullptr); }},
      {"ncclAlltoAllConfig",
       [=](void* f) { return as<decltype(&pncclAlltoAllConfig)>(f)(s, r, 4, kT, c, st, nullptr); }},
      {"ncclBroadcastConfig",
       [=](void* f) { return as<decltype(&pncclBroadcastConfig)>(f)(s, r, 4, kT, 0, c, st, nullptr); }},
      {"ncclReduceConfig",
       [=](void* f) { return as<decltype(&pncclReduceConfig)>(f)(s, r, 4, kT, ncclSum, 0, c, st, nullptr); }},
      {"ncclGatherConfig",
       [=](void* f) { return as<decltype(&pncclGatherConfig)>(f)(s, r, 4, kT, 0, c, st, nullptr); }},
      {"ncclScatterConfig",
       [=](void* f) { return as<decltype(&pncclScatterConfig)>(f)(s, r, 4, kT, 0, c, st, nullptr); }},
      {"ncclPutSignal",
       [=](void* f) { return as<decltype(&pncclPutSignal)>(f)(s, 4, kT, 0, win, 0, 0, 0, 0u, c, st); }},
      {"ncclSignal", [=](void* f) { return as<decltype(&pncclSignal)>(f)(0, 0, 0, 0u, c, st); }},
      {"ncclWaitSignal", [=](void* f) { return as<decltype(&pncclWaitSignal)>(f)(0, nullptr, c, st); }},
      // Purlin's own (purlin/purlin.h).
      {"purlinCommIsNative", [=](void* f) { return as<decltype(&purlinCommIsNative)>(f)(c, &i); }},
      {"purlinAllGatherV",
       [=](void* f) { return as<decltype(&purlinAllGatherV)>(f)(s, 4, r, four, nullptr, kT, c, st); }},
      {"purlinReduceScatterV", [=](void* f) {
         return as<decltype(&purlinReduceScatterV)>(f)(s, four, nullptr, r, 4, kT, ncclSum, c, st);
       }},
      {"purlinAllToAllV", [=](void* f) {
         return as<decltype(&purlinAllToAllV)>(f)(s, four, nullptr, r, four, nullptr, 4, kT, c, st);
       }},
  };
}

TEST_F(GuardedEntry, EveryExportedFunctionFailsCleanlyWhenItsBodyThrows) {
  const std::map<std::string, Call> table = cases();
  std::set<std::string> used;
  int called = 0;
  for (const std::string& exported : exported_names()) {
    // pncclX is ncclX's implementation; both names are called, and the WARN names ncclX.
    const std::string name = exported.rfind("pnccl", 0) == 0 ? exported.substr(1) : exported;
    auto k = table.find(name);
    if (k == table.end()) {
      ADD_FAILURE() << exported << " is exported but has no case in this test";
      continue;
    }
    used.insert(name);
    void* symbol = dlsym(purlin_, exported.c_str());
    ASSERT_NE(symbol, nullptr) << exported;

    purlin::test::arm_faults("entry:1");
    testing::internal::CaptureStderr();
    const ncclResult_t got = k->second(symbol);
    fflush(stderr);
    const std::string err = testing::internal::GetCapturedStderr();
    std::string first;
    EXPECT_EQ(got, kFailureValue) << exported;
    EXPECT_EQ(warn_lines(err, &first), 1) << exported << ": stderr was:\n" << err;
    EXPECT_NE(first.find(name + ": internal error: fault injected at site 'entry'"), std::string::npos)
        << exported << ": " << first;
    ++called;
  }
  for (const auto& [name, call] : table) EXPECT_EQ(used.count(name), 1u) << name << " has a case but is not exported";
  // 96 entry points under both names, ncclResetDebugInitInternal, the purlinX functions.
  EXPECT_GE(called, 2 * 96 + 1 + 4);
}

}  // namespace
