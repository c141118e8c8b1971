// Every entry point, given a bad argument, returns ncclInvalidArgument/ncclInvalidUsage
// (or, for value-returning functions, a neutral value) with exactly one WARN line that
// names the argument, and never crashes. Runs without a GPU and without a real NCCL.
#include <gtest/gtest.h>

#include "common/warn_lines.h"
#include <nccl.h>
#include <nccl_device.h>
#include <purlin/purlin.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Case {
  const char* name;       // entry point and what is wrong
  std::function<ncclResult_t()> call;
  ncclResult_t expected;
  const char* argument;   // text the WARN line must contain
};

using purlin::test::warn_lines;

class BadArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    const int dev = 0;
    ASSERT_EQ(ncclCommInitAll(&comm_, 1, &dev), ncclSuccess);
    ASSERT_EQ(ncclCommInitAll(&dead_, 1, &dev), ncclSuccess);
    ASSERT_EQ(ncclCommDestroy(dead_), ncclSuccess);
    ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess);
  }
  void TearDown() override { EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess); }

  std::vector<Case> cases();

  ncclComm_t comm_ = nullptr;
  ncclComm_t dead_ = nullptr;
  ncclUniqueId id_{};
  float buf_[16] = {};
};

std::vector<Case> BadArguments::cases() {
  ncclComm_t c = comm_, d = dead_;
  ncclUniqueId id = id_;
  float* b = buf_;
  const auto kT = ncclFloat32;
  const auto kBadT = static_cast<ncclDataType_t>(ncclNumTypes);
  const auto kBadOp = static_cast<ncclRedOp_t>(ncclNumOps + 7);
  ncclUniqueId garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  static ncclComm_t out;
  static ncclConfig_t bad_magic = NCCL_CONFIG_INITIALIZER, bad_blocking = NCCL_CONFIG_INITIALIZER;
  bad_magic.magic = 0;
  bad_blocking.blocking = 5;
  static int dev_neg = -1;
  static void* handle;
  static ncclWindow_t win;
  static ncclRedOp_t op;
  static float scalar = 2.0f;
  static ncclDevComm_t dev_comm;
  static ncclDevCommRequirements_t reqs{};
  static const size_t four[1] = {4}, three[1] = {3};
  static int is_native;
  const auto inv = ncclInvalidArgument, use = ncclInvalidUsage;
  return {
      {"GetUniqueId null", [] { return ncclGetUniqueId(nullptr); }, inv, "uniqueId"},
      {"InitRank null newcomm", [=] { return ncclCommInitRank(nullptr, 1, id, 0); }, inv, "newcomm"},
      {"InitRank nranks 0", [=] { return ncclCommInitRank(&out, 0, id, 0); }, inv, "nranks"},
      {"InitRank rank >= nranks", [=] { return ncclCommInitRank(&out, 2, id, 2); }, inv, "rank"},
      {"InitRank rank < 0", [=] { return ncclCommInitRank(&out, 2, id, -1); }, inv, "rank"},
      {"InitRank garbage id", [=] { return ncclCommInitRank(&out, 1, garbage, 0); }, inv, "commId"},
      {"InitRankConfig bad magic", [=] { return ncclCommInitRankConfig(&out, 1, id, 0, &bad_magic); }, inv, "config"},
      {"InitRankConfig bad blocking", [=] { return ncclCommInitRankConfig(&out, 1, id, 0, &bad_blocking); }, inv,
       "blocking"},
      {"InitRankScalable nId 0", [=, this] { return ncclCommInitRankScalable(&out, 1, 0, 0, &id_, nullptr); }, inv, "nId"},
      {"InitRankScalable null ids", [=] { return ncclCommInitRankScalable(&out, 1, 0, 1, nullptr, nullptr); }, inv,
       "commIds"},
      {"InitAll null comms", [] { return ncclCommInitAll(nullptr, 1, nullptr); }, inv, "comms"},
      {"InitAll ndev 0", [] { return ncclCommInitAll(&out, 0, nullptr); }, inv, "ndev"},
      {"InitAll bad device", [] { return ncclCommInitAll(&out, 1, &dev_neg); }, inv, "devlist"},
      {"Split null comm", [] { return ncclCommSplit(nullptr, 0, 0, &out, nullptr); }, inv, "comm"},
      {"Split dead comm", [=] { return ncclCommSplit(d, 0, 0, &out, nullptr); }, inv, "comm"},
      {"Split bad color", [=] { return ncclCommSplit(c, -5, 0, &out, nullptr); }, inv, "color"},
      {"Split null newcomm", [=] { return ncclCommSplit(c, 0, 0, nullptr, nullptr); }, inv, "newcomm"},
      {"Shrink count", [=] { return ncclCommShrink(c, nullptr, -1, &out, nullptr, 0); }, inv, "excludeRanksCount"},
      {"Shrink flags", [=] { return ncclCommShrink(c, nullptr, 0, &out, nullptr, 7); }, inv, "shrinkFlags"},
      {"Shrink null newcomm", [=] { return ncclCommShrink(c, nullptr, 0, nullptr, nullptr, 0); }, inv, "newcomm"},
      {"Finalize null", [] { return ncclCommFinalize(nullptr); }, inv, "comm"},
      {"Finalize dead", [=] { return ncclCommFinalize(d); }, inv, "comm"},
      {"Destroy dead", [=] { return ncclCommDestroy(d); }, inv, "comm"},
      {"Abort dead", [=] { return ncclCommAbort(d); }, inv, "comm"},
      {"Revoke flags", [=] { return ncclCommRevoke(c, 3); }, inv, "revokeFlags"},
      {"Revoke dead", [=] { return ncclCommRevoke(d, 0); }, inv, "comm"},
      {"GetAsyncError null out", [=] { return ncclCommGetAsyncError(c, nullptr); }, inv, "asyncError"},
      {"GetAsyncError dead", [=] {
         ncclResult_t e;
         return ncclCommGetAsyncError(d, &e);
       }, inv, "comm"},
      {"Count null out", [=] { return ncclCommCount(c, nullptr); }, inv, "count"},
      {"CuDevice null out", [=] { return ncclCommCuDevice(c, nullptr); }, inv, "device"},
      {"UserRank null out", [=] { return ncclCommUserRank(c, nullptr); }, inv, "rank"},
      {"UserRank dead", [=] {
         int r;
         return ncclCommUserRank(d, &r);
       }, inv, "comm"},
      {"GetVersion null", [] { return ncclGetVersion(nullptr); }, inv, "version"},
      {"MemAlloc null ptr", [] { return ncclMemAlloc(nullptr, 64); }, inv, "ptr"},
      {"MemFree unknown ptr", [=] { return ncclMemFree(b); }, inv, "ptr"},
      {"Register null buff", [=] { return ncclCommRegister(c, nullptr, 64, &handle); }, inv, "buff"},
      {"Register null handle", [=] { return ncclCommRegister(c, b, 64, nullptr); }, inv, "handle"},
      {"Deregister unknown", [=] { return ncclCommDeregister(c, b); }, inv, "handle"},
      {"WindowRegister null win", [=] { return ncclCommWindowRegister(c, b, 64, nullptr, 0); }, inv, "win"},
      {"WindowRegister flags", [=] { return ncclCommWindowRegister(c, b, 64, &win, 0x10); }, inv, "winFlags"},
      {"WindowDeregister unknown", [=] { return ncclCommWindowDeregister(c, reinterpret_cast<ncclWindow_t>(b)); },
       inv, "win"},
      {"PreMulSum null op", [=] { return ncclRedOpCreatePreMulSum(nullptr, &scalar, kT, ncclScalarHostImmediate, c); },
       inv, "op"},
      {"PreMulSum null scalar", [=] { return ncclRedOpCreatePreMulSum(&op, nullptr, kT, ncclScalarHostImmediate, c); },
       inv, "scalar"},
      {"PreMulSum bad type", [=] { return ncclRedOpCreatePreMulSum(&op, &scalar, kBadT, ncclScalarHostImmediate, c); },
       inv, "datatype"},
      {"PreMulSum bad residence",
       [=] { return ncclRedOpCreatePreMulSum(&op, &scalar, kT, static_cast<ncclScalarResidence_t>(7), c); }, inv,
       "residence"},
      {"RedOpDestroy unknown op", [=] { return ncclRedOpDestroy(kBadOp, c); }, inv, "op"},
      {"RedOpDestroy dead comm", [=] { return ncclRedOpDestroy(ncclSum, d); }, inv, "comm"},
      {"AllReduce null comm", [=] { return ncclAllReduce(b, b, 4, kT, ncclSum, nullptr, nullptr); }, inv, "comm"},
      {"AllReduce dead comm", [=] { return ncclAllReduce(b, b, 4, kT, ncclSum, d, nullptr); }, inv, "comm"},
      {"AllReduce bad type", [=] { return ncclAllReduce(b, b, 4, kBadT, ncclSum, c, nullptr); }, inv, "datatype"},
      {"AllReduce bad op", [=] { return ncclAllReduce(b, b, 4, kT, kBadOp, c, nullptr); }, inv, "op"},
      {"AllReduce null send", [=] { return ncclAllReduce(nullptr, b, 4, kT, ncclSum, c, nullptr); }, inv, "sendbuff"},
      {"AllReduce null recv", [=] { return ncclAllReduce(b, nullptr, 4, kT, ncclSum, c, nullptr); }, inv, "recvbuff"},
      {"AllReduce count overflow", [=] { return ncclAllReduce(b, b, SIZE_MAX / 2, kT, ncclSum, c, nullptr); }, inv,
       "count"},
      {"AllGather null recv", [=] { return ncclAllGather(b, nullptr, 4, kT, c, nullptr); }, inv, "recvbuff"},
      {"AllGather bad type", [=] { return ncclAllGather(b, b, 4, kBadT, c, nullptr); }, inv, "datatype"},
      {"ReduceScatter bad op", [=] { return ncclReduceScatter(b, b, 4, kT, kBadOp, c, nullptr); }, inv, "op"},
      {"ReduceScatter null send", [=] { return ncclReduceScatter(nullptr, b, 4, kT, ncclSum, c, nullptr); }, inv,
       "sendbuff"},
      {"AlltoAll null send", [=] { return ncclAlltoAll(nullptr, b, 4, kT, c, nullptr); }, inv, "sendbuff"},
      {"AlltoAll dead comm", [=] { return ncclAlltoAll(b, b, 4, kT, d, nullptr); }, inv, "comm"},
      {"Broadcast bad root", [=] { return ncclBroadcast(b, b, 4, kT, 1, c, nullptr); }, inv, "root"},
      {"Broadcast null recv", [=] { return ncclBroadcast(b, nullptr, 4, kT, 0, c, nullptr); }, inv, "recvbuff"},
      {"Bcast bad root", [=] { return ncclBcast(b, 4, kT, -1, c, nullptr); }, inv, "root"},
      {"Bcast null buff", [=] { return ncclBcast(nullptr, 4, kT, 0, c, nullptr); }, inv, "buff"},
      {"Reduce bad root", [=] { return ncclReduce(b, b, 4, kT, ncclSum, 3, c, nullptr); }, inv, "root"},
      {"Reduce bad op", [=] { return ncclReduce(b, b, 4, kT, kBadOp, 0, c, nullptr); }, inv, "op"},
      {"Gather bad root", [=] { return ncclGather(b, b, 4, kT, 2, c, nullptr); }, inv, "root"},
      {"Gather null recv at root", [=] { return ncclGather(b, nullptr, 4, kT, 0, c, nullptr); }, inv, "recvbuff"},
      {"Scatter bad root", [=] { return ncclScatter(b, b, 4, kT, 2, c, nullptr); }, inv, "root"},
      {"Scatter null send at root", [=] { return ncclScatter(nullptr, b, 4, kT, 0, c, nullptr); }, inv, "sendbuff"},
      {"Send bad peer", [=] { return ncclSend(b, 4, kT, 1, c, nullptr); }, inv, "peer"},
      {"Send null buff", [=] { return ncclSend(nullptr, 4, kT, 0, c, nullptr); }, inv, "sendbuff"},
      {"Recv bad peer", [=] { return ncclRecv(b, 4, kT, -2, c, nullptr); }, inv, "peer"},
      {"Recv bad type", [=] { return ncclRecv(b, 4, kBadT, 0, c, nullptr); }, inv, "datatype"},
      {"AllGatherV null comm", [=] { return purlinAllGatherV(b, 4, b, four, nullptr, kT, nullptr, nullptr); }, inv,
       "comm"},
      {"AllGatherV dead comm", [=] { return purlinAllGatherV(b, 4, b, four, nullptr, kT, d, nullptr); }, inv, "comm"},
      {"AllGatherV null recvcounts", [=] { return purlinAllGatherV(b, 4, b, nullptr, nullptr, kT, c, nullptr); }, inv,
       "recvcounts"},
      {"AllGatherV sendcount != recvcounts[rank]",
       [=] { return purlinAllGatherV(b, 3, b, four, nullptr, kT, c, nullptr); }, inv, "sendcount 3"},
      {"AllGatherV bad type", [=] { return purlinAllGatherV(b, 4, b, four, nullptr, kBadT, c, nullptr); }, inv,
       "datatype"},
      {"AllGatherV null recvbuff", [=] { return purlinAllGatherV(b, 4, nullptr, four, nullptr, kT, c, nullptr); }, inv,
       "recvbuff"},
      {"ReduceScatterV null sendcounts",
       [=] { return purlinReduceScatterV(b, nullptr, nullptr, b, 4, kT, ncclSum, c, nullptr); }, inv, "sendcounts"},
      {"ReduceScatterV recvcount != sendcounts[rank]",
       [=] { return purlinReduceScatterV(b, four, nullptr, b, 3, kT, ncclSum, c, nullptr); }, inv, "recvcount 3"},
      {"ReduceScatterV bad op", [=] { return purlinReduceScatterV(b, four, nullptr, b, 4, kT, kBadOp, c, nullptr); },
       inv, "op"},
      {"ReduceScatterV null sendbuff",
       [=] { return purlinReduceScatterV(nullptr, four, nullptr, b, 4, kT, ncclSum, c, nullptr); }, inv, "sendbuff"},
      {"AllToAllV null sendcounts",
       [=] { return purlinAllToAllV(b, nullptr, nullptr, b + 8, four, nullptr, 4, kT, c, nullptr); }, inv,
       "sendcounts"},
      {"AllToAllV null recvcounts",
       [=] { return purlinAllToAllV(b, four, nullptr, b + 8, nullptr, nullptr, 4, kT, c, nullptr); }, inv,
       "recvcounts"},
      {"AllToAllV maxcount < sendcounts entry",
       [=] { return purlinAllToAllV(b, four, nullptr, b + 8, four, nullptr, 3, kT, c, nullptr); }, inv, "maxcount"},
      {"AllToAllV in place with unequal partitions",
       [=] { return purlinAllToAllV(b, four, nullptr, b, three, nullptr, 4, kT, c, nullptr); }, inv,
       "recvcounts[0] = 3 must equal"},
      {"AllToAllV dead comm", [=] { return purlinAllToAllV(b, four, nullptr, b + 8, four, nullptr, 4, kT, d, nullptr); },
       inv, "comm"},
      {"CommIsNative null out", [=] { return purlinCommIsNative(c, nullptr); }, inv, "native"},
      {"CommIsNative dead comm", [=] { return purlinCommIsNative(d, &is_native); }, inv, "comm"},
      // CI communicators have no GPU: valid V calls are refused, not forwarded.
      {"AllGatherV forwarded comm", [=] { return purlinAllGatherV(b, 4, b, four, nullptr, kT, c, nullptr); }, use,
       "needs a native communicator"},
      {"GroupEnd without start", [] { return ncclGroupEnd(); }, use, "ncclGroupStart"},
      {"GroupSimulateEnd null", [] { return ncclGroupSimulateEnd(nullptr); }, inv, "simInfo"},
      {"DevCommCreate null reqs", [=] { return ncclDevCommCreate(c, nullptr, &dev_comm); }, inv, "reqs"},
      {"DevCommCreate null out", [=] { return ncclDevCommCreate(c, &reqs, nullptr); }, inv, "outDevComm"},
      {"DevCommCreate dead comm", [=] { return ncclDevCommCreate(d, &reqs, &dev_comm); }, inv, "comm"},
      {"DevCommDestroy null", [=] { return ncclDevCommDestroy(c, nullptr); }, inv, "devComm"},
      {"GinBarrier dead comm", [=] {
         ncclGinBarrierHandle_t h;
         ncclDevResourceRequirements_t r;
         return ncclGinBarrierCreateRequirement(d, ncclTeam_t{}, 1, &h, &r);
       }, inv, "comm"},
      {"TeamWorld dead comm", [=] { return ncclTeamWorld(d).nRanks == 0 ? inv : ncclSuccess; }, inv, "comm"},
      {"TeamLsa null comm", [] { return ncclTeamLsa(nullptr).nRanks == 0 ? inv : ncclSuccess; }, inv, "comm"},
      {"TeamRail null comm", [] { return ncclTeamRail(nullptr).nRanks == 0 ? inv : ncclSuccess; }, inv, "comm"},
      {"TeamRankToWorld dead", [=] { return ncclTeamRankToWorld(d, ncclTeam_t{}, 0) == -1 ? inv : ncclSuccess; }, inv,
       "comm"},
      {"TeamRankToLsa null", [] { return ncclTeamRankToLsa(nullptr, ncclTeam_t{}, 0) == -1 ? inv : ncclSuccess; },
       inv, "comm"},
  };
}

TEST_F(BadArguments, EveryEntryPointRejectsWithOneWarnNamingTheArgument) {
  int checked = 0;
  for (const Case& k : cases()) {
    testing::internal::CaptureStderr();
    ncclResult_t got = k.call();
    fflush(stderr);
    std::string err = testing::internal::GetCapturedStderr();
    std::string first;
    EXPECT_EQ(got, k.expected) << k.name;
    EXPECT_EQ(warn_lines(err, &first), 1) << k.name << ": stderr was:\n" << err;
    EXPECT_NE(first.find(k.argument), std::string::npos) << k.name << ": WARN does not name '" << k.argument
                                                         << "': " << first;
    ++checked;
  }
  EXPECT_GE(checked, 80);
}

TEST_F(BadArguments, ValueReturningFunctionsNeverCrash) {
  EXPECT_STREQ(ncclGetErrorString(static_cast<ncclResult_t>(99)), "unknown result code");
  EXPECT_NE(ncclGetLastError(nullptr), nullptr);
  EXPECT_NE(ncclGetLastError(dead_), nullptr);
}

TEST_F(BadArguments, ZeroCountNeedsNoBuffers) {
  // NCCL accepts NULL buffers when nothing is transferred; validation must too. The call
  // then reaches forwarding, whose answer depends on the machine (no real NCCL: a system
  // error; a real NCCL without a GPU: a CUDA error), never a refusal of the arguments.
  testing::internal::CaptureStderr();
  const ncclResult_t r = ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm_, nullptr);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(r, ncclInvalidArgument) << err;
  EXPECT_NE(r, ncclInvalidUsage) << err;
  EXPECT_EQ(err.find("buff"), std::string::npos) << err;
}

}  // namespace
