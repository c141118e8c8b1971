// Forwarding of collectives, point-to-point, groups and reduction operators: every call
// reaches the real NCCL with its arguments intact, on the real communicator, and the real
// library's result comes back (fixture and method: forwarding_fixture.h).
#include <purlin/purlin.h>

#include "forwarding_fixture.h"

namespace forwarding {
namespace {

// ---- The real communicator ---------------------------------------------------------

TEST_F(Forwarding, RealCommunicatorIsCreatedLazilyOnTheFirstForwardedCall) {
  EXPECT_TRUE(calls().empty()) << "Purlin's own init must not touch the real NCCL: " << calls()[0].line;
  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, ncclSum, comm_, stream(0x52)), ncclSuccess);
  auto log = calls();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0].name, "GetUniqueId");
  EXPECT_TRUE(log[1].name == "CommInitRank" || log[1].name == "CommInitRankConfig") << log[1].line;
  expect_args(log[1], {{"nranks", "1"}, {"rank", "0"}, {"commId", log[0].arg("out")}});
  EXPECT_EQ(log[2].name, "AllReduce");
  expect_on_real_comm(log[2], log[1].arg("out"));
  // Later calls reuse it.
  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, ncclSum, comm_, stream(0x52)), ncclSuccess);
  EXPECT_EQ(calls().size(), 4u);
}

TEST_F(Forwarding, UserConfigReachesTheRealCommunicator) {
  ASSERT_EQ(ncclCommDestroy(comm_), ncclSuccess);
  comm_ = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.cgaClusterSize = 2;
  config.minCTAs = 3;
  config.maxCTAs = 17;
  config.commName = "purlin forwarding";
  ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess);
  ASSERT_EQ(ncclCommInitRankConfig(&comm_, 1, id_, 0, &config), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, ncclSum, comm_, stream(0x53)), ncclSuccess);
  auto init = fake_.calls_named("CommInitRankConfig");
  ASSERT_EQ(init.size(), 1u) << "the real communicator was created without the user's config";
  expect_args(init[0], {{"config.cgaClusterSize", "2"}, {"config.minCTAs", "3"}, {"config.maxCTAs", "17"},
                        {"config.commName", "purlin forwarding"}, {"config.magic", str(0xcafebeef)}});
}

// ---- Collectives and point-to-point ------------------------------------------------

TEST_F(Forwarding, AllReduce) {
  std::string rc = make_real_comm();
  fake_.set_result("AllReduce", kFakeError);
  EXPECT_EQ(ncclAllReduce(g_send + 1, g_recv + 2, 1001, ncclBfloat16, ncclMax, comm_, stream(0x1001)), kFakeError);
  auto c = last("AllReduce");
  expect_args(c, {{"sendbuff", hex(g_send + 1)}, {"recvbuff", hex(g_recv + 2)}, {"count", "1001"},
                  {"datatype", str(ncclBfloat16)}, {"op", str(ncclMax)}, {"stream", hex(stream(0x1001))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, AllGather) {
  std::string rc = make_real_comm();
  fake_.set_result("AllGather", kFakeError);
  EXPECT_EQ(ncclAllGather(g_send + 3, g_recv + 4, 1002, ncclUint8, comm_, stream(0x1002)), kFakeError);
  auto c = last("AllGather");
  expect_args(c, {{"sendbuff", hex(g_send + 3)}, {"recvbuff", hex(g_recv + 4)}, {"sendcount", "1002"},
                  {"datatype", str(ncclUint8)}, {"stream", hex(stream(0x1002))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, ReduceScatter) {
  std::string rc = make_real_comm();
  fake_.set_result("ReduceScatter", kFakeError);
  EXPECT_EQ(ncclReduceScatter(g_send + 5, g_recv + 6, 1003, ncclFloat64, ncclProd, comm_, stream(0x1003)),
            kFakeError);
  auto c = last("ReduceScatter");
  expect_args(c, {{"sendbuff", hex(g_send + 5)}, {"recvbuff", hex(g_recv + 6)}, {"recvcount", "1003"},
                  {"datatype", str(ncclFloat64)}, {"op", str(ncclProd)}, {"stream", hex(stream(0x1003))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, AlltoAll) {
  std::string rc = make_real_comm();
  fake_.set_result("AlltoAll", kFakeError);
  EXPECT_EQ(ncclAlltoAll(g_send + 7, g_recv + 8, 1004, ncclInt64, comm_, stream(0x1004)), kFakeError);
  auto c = last("AlltoAll");
  expect_args(c, {{"sendbuff", hex(g_send + 7)}, {"recvbuff", hex(g_recv + 8)}, {"count", "1004"},
                  {"datatype", str(ncclInt64)}, {"stream", hex(stream(0x1004))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Broadcast) {
  std::string rc = make_real_comm();
  fake_.set_result("Broadcast", kFakeError);
  EXPECT_EQ(ncclBroadcast(g_send + 9, g_recv + 10, 1005, ncclFloat16, 0, comm_, stream(0x1005)), kFakeError);
  auto c = last("Broadcast");
  expect_args(c, {{"sendbuff", hex(g_send + 9)}, {"recvbuff", hex(g_recv + 10)}, {"count", "1005"},
                  {"datatype", str(ncclFloat16)}, {"root", "0"}, {"stream", hex(stream(0x1005))}});
  expect_on_real_comm(c, rc);
}

// ncclBcast is an in-place broadcast: forwarding it as Bcast or as Broadcast(buff, buff) is
// the same call.
TEST_F(Forwarding, Bcast) {
  std::string rc = make_real_comm();
  fake_.set_result("Bcast", kFakeError);
  fake_.set_result("Broadcast", kFakeError);
  EXPECT_EQ(ncclBcast(g_recv + 11, 1006, ncclUint32, 0, comm_, stream(0x1006)), kFakeError);
  auto log = calls();
  ASSERT_EQ(log.size(), 1u);
  const LoggedCall& c = log[0];
  if (c.name == "Bcast") {
    EXPECT_EQ(c.arg("buff"), hex(g_recv + 11)) << c.line;
  } else {
    ASSERT_EQ(c.name, "Broadcast");
    expect_args(c, {{"sendbuff", hex(g_recv + 11)}, {"recvbuff", hex(g_recv + 11)}});
  }
  expect_args(c, {{"count", "1006"}, {"datatype", str(ncclUint32)}, {"root", "0"}, {"stream", hex(stream(0x1006))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Reduce) {
  std::string rc = make_real_comm();
  fake_.set_result("Reduce", kFakeError);
  EXPECT_EQ(ncclReduce(g_send + 12, g_recv + 13, 1007, ncclInt32, ncclMin, 0, comm_, stream(0x1007)), kFakeError);
  auto c = last("Reduce");
  expect_args(c, {{"sendbuff", hex(g_send + 12)}, {"recvbuff", hex(g_recv + 13)}, {"count", "1007"},
                  {"datatype", str(ncclInt32)}, {"op", str(ncclMin)}, {"root", "0"}, {"stream", hex(stream(0x1007))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Gather) {
  std::string rc = make_real_comm();
  fake_.set_result("Gather", kFakeError);
  EXPECT_EQ(ncclGather(g_send + 14, g_recv + 15, 1008, ncclFloat8e4m3, 0, comm_, stream(0x1008)), kFakeError);
  auto c = last("Gather");
  expect_args(c, {{"sendbuff", hex(g_send + 14)}, {"recvbuff", hex(g_recv + 15)}, {"count", "1008"},
                  {"datatype", str(ncclFloat8e4m3)}, {"root", "0"}, {"stream", hex(stream(0x1008))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Scatter) {
  std::string rc = make_real_comm();
  fake_.set_result("Scatter", kFakeError);
  EXPECT_EQ(ncclScatter(g_send + 16, g_recv + 17, 1009, ncclFloat8e5m2, 0, comm_, stream(0x1009)), kFakeError);
  auto c = last("Scatter");
  expect_args(c, {{"sendbuff", hex(g_send + 16)}, {"recvbuff", hex(g_recv + 17)}, {"count", "1009"},
                  {"datatype", str(ncclFloat8e5m2)}, {"root", "0"}, {"stream", hex(stream(0x1009))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Send) {
  std::string rc = make_real_comm();
  fake_.set_result("Send", kFakeError);
  EXPECT_EQ(ncclSend(g_send + 18, 1010, ncclUint64, 0, comm_, stream(0x1010)), kFakeError);
  auto c = last("Send");
  expect_args(c, {{"sendbuff", hex(g_send + 18)}, {"count", "1010"}, {"datatype", str(ncclUint64)},
                  {"peer", "0"}, {"stream", hex(stream(0x1010))}});
  expect_on_real_comm(c, rc);
}

TEST_F(Forwarding, Recv) {
  std::string rc = make_real_comm();
  fake_.set_result("Recv", kFakeError);
  EXPECT_EQ(ncclRecv(g_recv + 19, 1011, ncclInt8, 0, comm_, stream(0x1011)), kFakeError);
  auto c = last("Recv");
  expect_args(c, {{"recvbuff", hex(g_recv + 19)}, {"count", "1011"}, {"datatype", str(ncclInt8)}, {"peer", "0"},
                  {"stream", hex(stream(0x1011))}});
  expect_on_real_comm(c, rc);
}

// ---- Groups --------------------------------------------------------------------------

// Inside a group nothing reaches the real NCCL before ncclGroupEnd; then the calls are
// issued, in order, inside one real group, and the real GroupEnd's result comes back.
TEST_F(Forwarding, GroupIssuesItsCallsInsideOneRealGroupAtGroupEnd) {
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(g_send + 20, 1012, ncclFloat32, 0, comm_, stream(0x1012)), ncclSuccess);
  ASSERT_EQ(ncclRecv(g_recv + 21, 1013, ncclFloat32, 0, comm_, stream(0x1013)), ncclSuccess);
  ASSERT_EQ(ncclAllGather(g_send + 22, g_recv + 22, 1014, ncclInt32, comm_, stream(0x1014)), ncclSuccess);
  EXPECT_TRUE(calls().empty()) << "a grouped call reached the real NCCL before ncclGroupEnd: " << calls()[0].line;
  fake_.set_result("GroupEnd", kFakeError);
  EXPECT_EQ(ncclGroupEnd(), kFakeError);

  std::vector<std::string> names;
  for (const LoggedCall& c : calls()) {
    if (c.name != "GetUniqueId" && c.name != "CommInitRank" && c.name != "CommInitRankConfig") names.push_back(c.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"GroupStart", "Send", "Recv", "AllGather", "GroupEnd"}));
  std::string rc = real_comm();
  expect_args(last("Send"), {{"sendbuff", hex(g_send + 20)}, {"count", "1012"}, {"comm", rc}});
  expect_args(last("Recv"), {{"recvbuff", hex(g_recv + 21)}, {"count", "1013"}, {"comm", rc}});
  expect_args(last("AllGather"), {{"sendcount", "1014"}, {"stream", hex(stream(0x1014))}, {"comm", rc}});
}

TEST_F(Forwarding, GroupSimulateEndReturnsTheRealEstimate) {
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 1015, ncclFloat32, ncclAvg, comm_, stream(0x1015)), ncclSuccess);
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  fake_.set_result("GroupSimulateEnd", kFakeError);
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), kFakeError);
  EXPECT_EQ(sim.estimatedTime, NCCL_UNDEF_FLOAT) << "the fake only writes the estimate on success";
  auto c = last("GroupSimulateEnd");
  expect_args(c, {{"simInfo.size", str(sizeof(ncclSimInfo_t))}, {"simInfo.magic", str(0x74685283)}});
  EXPECT_EQ(last("AllReduce").arg("count"), "1015");

  fake_.set_result("GroupSimulateEnd", -1);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 1016, ncclFloat32, ncclAvg, comm_, stream(0x1016)), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&sim), ncclSuccess);
  EXPECT_EQ(sim.estimatedTime, 42.5f);
}

// ---- Reduction operators -----------------------------------------------------------

TEST_F(Forwarding, PreMulSumOperatorIsTheRealOneThroughItsLife) {
  float scalar = 2.5f;
  ncclRedOp_t op{};
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm_), ncclSuccess);
  std::string rc = real_comm();
  auto create = last("RedOpCreatePreMulSum");
  expect_args(create, {{"scalar", hex(&scalar)}, {"scalar.value", "2.5"}, {"datatype", str(ncclFloat32)},
                       {"residence", str(ncclScalarHostImmediate)}});
  expect_on_real_comm(create, rc);
  const std::string real_op = create.arg("out");

  ASSERT_EQ(ncclAllReduce(g_send, g_recv, 1017, ncclFloat32, op, comm_, stream(0x1017)), ncclSuccess);
  EXPECT_EQ(last("AllReduce").arg("op"), real_op);

  fake_.set_result("RedOpDestroy", kFakeError);
  EXPECT_EQ(ncclRedOpDestroy(op, comm_), kFakeError);
  auto destroy = last("RedOpDestroy");
  EXPECT_EQ(destroy.arg("op"), real_op) << destroy.line;
  expect_on_real_comm(destroy, rc);
}

// NCCL ties a PreMulSum operator to its scalar's datatype; Purlin checks it at the call, so
// a mismatch never reaches the real NCCL.
TEST_F(Forwarding, PreMulSumOperatorOnlyServesItsDatatype) {
  float scalar = 4.0f;
  ncclRedOp_t op{};
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm_), ncclSuccess);
  fake_.reset();
  EXPECT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat64, op, comm_, stream(0x1018)), ncclInvalidArgument);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
  EXPECT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, op, comm_, stream(0x1018)), ncclSuccess);
  EXPECT_EQ(fake_.calls_named("AllReduce").size(), 1u);
  ASSERT_EQ(ncclRedOpDestroy(op, comm_), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(g_send, g_recv, 8, ncclFloat32, op, comm_, stream(0x1018)), ncclInvalidArgument)
      << "a destroyed operator is unknown again";
}

TEST_F(Forwarding, PreMulSumCreationFailureComesBack) {
  double scalar = -0.75;
  ncclRedOp_t op{};
  fake_.set_result("RedOpCreatePreMulSum", kFakeError);
  EXPECT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat64, ncclScalarHostImmediate, comm_), kFakeError);
  expect_args(last("RedOpCreatePreMulSum"), {{"scalar.value", "-0.75"}, {"datatype", str(ncclFloat64)}});
}

// ---- Purlin's own entry points ---------------------------------------------------------

// A forwarded communicator (no GPU here) has no native path; the V collectives exist only
// there and must never reach the real NCCL, which has no such calls.
TEST_F(Forwarding, VCollectivesNeverReachTheRealNccl) {
  make_real_comm();
  int native = -1;
  ASSERT_EQ(purlinCommIsNative(comm_, &native), ncclSuccess);
  EXPECT_EQ(native, 0);
  const size_t counts[1] = {16};
  EXPECT_EQ(purlinAllGatherV(g_send, 16, g_recv, counts, nullptr, ncclInt8, comm_, stream(0x2001)), ncclInvalidUsage);
  EXPECT_EQ(purlinReduceScatterV(g_send, counts, nullptr, g_recv, 16, ncclInt8, ncclSum, comm_, stream(0x2002)),
            ncclInvalidUsage);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(purlinAllToAllV(g_send, counts, nullptr, g_recv, counts, nullptr, 16, ncclInt8, comm_, stream(0x2003)),
            ncclInvalidUsage);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

// The real NCCL calls parts of its own public API internally (ncclCommGetAsyncError before
// enqueueing, ncclCommRegister for windows, ncclBroadcast for ncclBcast). When PyTorch has
// loaded it into the global scope, those calls reach Purlin's symbols with the real
// handle; they must go straight back, and stop doing so once Purlin's communicator is gone.
TEST_F(Forwarding, RealHandlesComingBackArePassedThrough) {
  std::string rc = make_real_comm();
  auto real = reinterpret_cast<ncclComm_t>(static_cast<uintptr_t>(std::stoull(rc, nullptr, 16)));
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(real, &async), ncclSuccess);
  expect_on_real_comm(last("CommGetAsyncError"), rc);
  fake_.set_result("Broadcast", kFakeError);
  EXPECT_EQ(ncclBroadcast(g_send, g_recv, 3, ncclInt8, 0, real, stream(0x77)), kFakeError);
  expect_on_real_comm(last("Broadcast"), rc);
  void* handle = nullptr;
  EXPECT_EQ(ncclCommRegister(real, g_send, 64, &handle), ncclSuccess);
  expect_on_real_comm(last("CommRegister"), rc);

  ASSERT_EQ(ncclCommDestroy(comm_), ncclSuccess);
  comm_ = nullptr;
  EXPECT_EQ(ncclCommGetAsyncError(real, &async), ncclInvalidArgument);
}

}  // namespace
}  // namespace forwarding
