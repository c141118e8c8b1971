// Forwarding of memory, registration, windows, the device API's host functions and the
// communicator's end of life: arguments and values behind pointers reach the real NCCL,
// handles it returns are the ones later given back to it, and its results come back
// (fixture and method: forwarding_fixture.h).
#include "forwarding_fixture.h"
#include "nccl_api.h"

namespace forwarding {
namespace {

// ---- Memory and registration ---------------------------------------------------------

TEST_F(Forwarding, MemAllocAndFreeUseTheRealAllocator) {
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 3 << 20), ncclSuccess);
  auto alloc = last("MemAlloc");
  EXPECT_EQ(alloc.arg("size"), str(3 << 20)) << alloc.line;
  EXPECT_EQ(alloc.arg("out"), hex(p)) << "the pointer returned is not the real allocator's";
  fake_.set_result("MemFree", kFakeError);
  EXPECT_EQ(ncclMemFree(p), kFakeError);
  EXPECT_EQ(last("MemFree").arg("ptr"), hex(p));
}

TEST_F(Forwarding, MemAllocFailureComesBack) {
  void* p = nullptr;
  fake_.set_result("MemAlloc", kFakeError);
  EXPECT_EQ(ncclMemAlloc(&p, 12345), kFakeError);
  EXPECT_EQ(last("MemAlloc").arg("size"), "12345");
}

// Registration is local, so it must not force the (collective) real init: it is handed
// to the real NCCL when the real communicator comes into being.
TEST_F(Forwarding, RegistrationBeforeTheRealCommunicatorIsReplayedAtItsCreation) {
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(comm_, g_send + 64, 4096, &handle), ncclSuccess);
  EXPECT_TRUE(calls().empty()) << "registration created the real communicator: " << calls()[0].line;
  std::string rc = make_real_comm(/*clear_log=*/false);
  auto reg = last("CommRegister");
  expect_args(reg, {{"buff", hex(g_send + 64)}, {"size", "4096"}});
  expect_on_real_comm(reg, rc);
  fake_.set_result("CommDeregister", kFakeError);
  EXPECT_EQ(ncclCommDeregister(comm_, handle), kFakeError);
  auto dereg = last("CommDeregister");
  EXPECT_EQ(dereg.arg("handle"), reg.arg("out")) << "deregistered a handle the real NCCL never issued";
  expect_on_real_comm(dereg, rc);
}

TEST_F(Forwarding, RegistrationOnAnExistingRealCommunicatorIsImmediate) {
  std::string rc = make_real_comm();
  void* handle = nullptr;
  fake_.set_result("CommRegister", kFakeError);
  EXPECT_EQ(ncclCommRegister(comm_, g_recv + 128, 8192, &handle), kFakeError);
  auto reg = last("CommRegister");
  expect_args(reg, {{"buff", hex(g_recv + 128)}, {"size", "8192"}});
  expect_on_real_comm(reg, rc);

  fake_.set_result("CommRegister", -1);
  ASSERT_EQ(ncclCommRegister(comm_, g_recv + 128, 8192, &handle), ncclSuccess);
  std::string real_handle = last("CommRegister").arg("out");
  ASSERT_EQ(ncclCommDeregister(comm_, handle), ncclSuccess);
  EXPECT_EQ(last("CommDeregister").arg("handle"), real_handle);
}

TEST_F(Forwarding, WindowIsTheRealOne) {
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm_, g_recv, 16384, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  std::string rc = real_comm();
  auto reg = last("CommWindowRegister");
  expect_args(reg, {{"buff", hex(g_recv)}, {"size", "16384"}, {"winFlags", str(NCCL_WIN_COLL_SYMMETRIC)},
                    {"out", hex(win)}});
  expect_on_real_comm(reg, rc);
  fake_.set_result("CommWindowDeregister", kFakeError);
  EXPECT_EQ(ncclCommWindowDeregister(comm_, win), kFakeError);
  auto dereg = last("CommWindowDeregister");
  EXPECT_EQ(dereg.arg("win"), hex(win)) << dereg.line;
  expect_on_real_comm(dereg, rc);
}

TEST_F(Forwarding, WindowRegistrationFailureComesBack) {
  ncclWindow_t win = nullptr;
  fake_.set_result("CommWindowRegister", kFakeError);
  EXPECT_EQ(ncclCommWindowRegister(comm_, g_send, 4096, &win, NCCL_WIN_DEFAULT), kFakeError);
  EXPECT_EQ(last("CommWindowRegister").arg("winFlags"), str(NCCL_WIN_DEFAULT));
}

// ---- Device API, host side -------------------------------------------------------------

TEST_F(Forwarding, DevCommCreateAndDestroy) {
  // The 2.29+ layout starts with a size/magic/version header that only the initializer sets; a
  // zeroed struct reads as 2.28's headerless one (dev_comm_requirements.h).
  ncclDevCommRequirements_t reqs = NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  reqs.barrierCount = 2;
  reqs.lsaBarrierCount = 3;
  reqs.railGinBarrierCount = 4;
  reqs.lsaLLA2ABlockCount = 5;
  reqs.lsaLLA2ASlotCount = 6;
  reqs.ginContextCount = 7;
  reqs.ginSignalCount = 8;
  reqs.ginCounterCount = 9;
  ncclDevComm_t dev{};
  ASSERT_EQ(ncclDevCommCreate(comm_, &reqs, &dev), ncclSuccess);
  std::string rc = real_comm();
  auto create = last("DevCommCreate");
  // The real NCCL reads a copy in its own version's layout (RealRequirements), with the values.
  expect_args(create, {{"reqs.barrierCount", "2"}, {"reqs.lsaBarrierCount", "3"},
                       {"reqs.railGinBarrierCount", "4"}, {"reqs.lsaLLA2ABlockCount", "5"},
                       {"reqs.lsaLLA2ASlotCount", "6"}, {"reqs.ginContextCount", "7"},
                       {"reqs.ginSignalCount", "8"}, {"reqs.ginCounterCount", "9"}});
  expect_on_real_comm(create, rc);
  EXPECT_EQ(dev.lsaBarrier.nBarriers, 1003) << "the device communicator is not the real NCCL's";
  EXPECT_EQ(dev.ginSignalCount, 8);

  fake_.set_result("DevCommDestroy", kFakeError);
  EXPECT_EQ(ncclDevCommDestroy(comm_, &dev), kFakeError);
  auto destroy = last("DevCommDestroy");
  expect_args(destroy, {{"devComm", hex(&dev)}, {"devComm.lsaBarrier.nBarriers", "1003"}});
  expect_on_real_comm(destroy, rc);
}

TEST_F(Forwarding, DevCommCreateFailureComesBack) {
  ncclDevCommRequirements_t reqs{};
  ncclDevComm_t dev{};
  fake_.set_result("DevCommCreate", kFakeError);
  EXPECT_EQ(ncclDevCommCreate(comm_, &reqs, &dev), kFakeError);
}

TEST_F(Forwarding, Teams) {
  ncclTeam_t world = ncclTeamWorld(comm_);
  std::string rc = real_comm();
  expect_on_real_comm(last("TeamWorld"), rc);
  EXPECT_EQ(world.nRanks, 1);
  EXPECT_EQ(world.stride, 1);
  ncclTeam_t lsa = ncclTeamLsa(comm_);
  expect_on_real_comm(last("TeamLsa"), rc);
  EXPECT_EQ(lsa.nRanks, 1);
  ncclTeam_t rail = ncclTeamRail(comm_);
  expect_on_real_comm(last("TeamRail"), rc);
  EXPECT_EQ(rail.nRanks, 1);

  // The fake's rank arithmetic is distinctive (1000/2000 + 100 * team.rank + rank).
  ncclTeam_t team{4, 3, 2};
  EXPECT_EQ(ncclTeamRankToWorld(comm_, team, 1), 1301);
  auto to_world = last("TeamRankToWorld");
  expect_args(to_world, {{"team.nRanks", "4"}, {"team.rank", "3"}, {"team.stride", "2"}, {"rank", "1"}});
  expect_on_real_comm(to_world, rc);
  EXPECT_EQ(ncclTeamRankToLsa(comm_, team, 2), 2302);
  expect_args(last("TeamRankToLsa"), {{"team.rank", "3"}, {"rank", "2"}, {"comm", rc}});
}

TEST_F(Forwarding, LsaBarrierRequirement) {
  ncclTeam_t team{5, 1, 1};
  ncclLsaBarrierHandle_t handle{};
  ncclDevResourceRequirements_t req{};
  ASSERT_EQ(ncclLsaBarrierCreateRequirement(team, 6, &handle, &req), ncclSuccess);
  expect_args(last("LsaBarrierCreateRequirement"), {{"team.nRanks", "5"}, {"team.rank", "1"}, {"nBarriers", "6"},
                                                    {"outHandle", hex(&handle)}, {"outReq", hex(&req)}});
  EXPECT_EQ(req.bufferSize, 666u);
  EXPECT_EQ(handle.nBarriers, 6);
  fake_.set_result("LsaBarrierCreateRequirement", kFakeError);
  EXPECT_EQ(ncclLsaBarrierCreateRequirement(team, 6, &handle, &req), kFakeError);
}

TEST_F(Forwarding, GinBarrierRequirement) {
  ncclTeam_t team{1, 0, 1};
  ncclGinBarrierHandle_t handle{};
  ncclDevResourceRequirements_t req{};
  fake_.set_result("GinBarrierCreateRequirement", kFakeError);
  EXPECT_EQ(ncclGinBarrierCreateRequirement(comm_, team, 7, &handle, &req), kFakeError);
  fake_.set_result("GinBarrierCreateRequirement", -1);
  ASSERT_EQ(ncclGinBarrierCreateRequirement(comm_, team, 7, &handle, &req), ncclSuccess);
  auto c = last("GinBarrierCreateRequirement");
  expect_args(c, {{"nBarriers", "7"}, {"outHandle", hex(&handle)}, {"outReq", hex(&req)}});
  expect_on_real_comm(c, real_comm());
  EXPECT_EQ(req.bufferSize, 7u * 222u);
  EXPECT_EQ(req.ginSignalCount, 7);
}

TEST_F(Forwarding, LLA2A) {
  EXPECT_EQ(ncclLLA2ACalcSlots(100, 16), 316);
  expect_args(last("LLA2ACalcSlots"), {{"maxElts", "100"}, {"maxEltSize", "16"}});
  ncclLLA2AHandle_t handle{};
  ncclDevResourceRequirements_t req{};
  ASSERT_EQ(ncclLLA2ACreateRequirement(9, 10, &handle, &req), ncclSuccess);
  expect_args(last("LLA2ACreateRequirement"), {{"nBlocks", "9"}, {"nSlots", "10"}, {"outHandle", hex(&handle)}});
  EXPECT_EQ(req.bufferSize, 333u * 9u * 10u);
  EXPECT_EQ(handle.nSlots, 10u);
  fake_.set_result("LLA2ACreateRequirement", kFakeError);
  EXPECT_EQ(ncclLLA2ACreateRequirement(9, 10, &handle, &req), kFakeError);
}

// ---- End of life -------------------------------------------------------------------------

TEST_F(Forwarding, FinalizeAndDestroyReachTheRealCommunicator) {
  std::string rc = make_real_comm();
  fake_.set_result("CommFinalize", kFakeError);
  EXPECT_EQ(ncclCommFinalize(comm_), kFakeError);
  expect_on_real_comm(last("CommFinalize"), rc);
  fake_.set_result("CommDestroy", kFakeError);
  EXPECT_EQ(ncclCommDestroy(comm_), kFakeError);
  comm_ = nullptr;  // destroyed, whatever the real result
  expect_on_real_comm(last("CommDestroy"), rc);
}

TEST_F(Forwarding, AbortReachesTheRealCommunicator) {
  std::string rc = make_real_comm();
  fake_.set_result("CommAbort", kFakeError);
  EXPECT_EQ(ncclCommAbort(comm_), kFakeError);
  comm_ = nullptr;
  expect_on_real_comm(last("CommAbort"), rc);
}

TEST_F(Forwarding, RevokeReachesTheRealCommunicator) {
  std::string rc = make_real_comm();
  fake_.set_result("CommRevoke", kFakeError);
  EXPECT_EQ(ncclCommRevoke(comm_, NCCL_REVOKE_DEFAULT), kFakeError);
  auto c = last("CommRevoke");
  EXPECT_EQ(c.arg("revokeFlags"), str(NCCL_REVOKE_DEFAULT));
  expect_on_real_comm(c, rc);
}

// Without a real communicator there is nothing of the real NCCL to end.
TEST_F(Forwarding, DestroyWithoutRealCommunicatorLeavesTheRealNcclAlone) {
  ASSERT_EQ(ncclCommDestroy(comm_), ncclSuccess);
  comm_ = nullptr;
  EXPECT_TRUE(calls().empty()) << calls()[0].line;
}

TEST_F(Forwarding, AsyncErrorOfTheRealCommunicatorIsReported) {
  std::string rc = make_real_comm();
  ncclResult_t async = ncclInProgress;
  fake_.set_result("CommGetAsyncError", kFakeError);
  EXPECT_EQ(ncclCommGetAsyncError(comm_, &async), kFakeError);
  expect_on_real_comm(last("CommGetAsyncError"), rc);
}

TEST_F(Forwarding, ResetDebugInitReachesTheRealNccl) {
  // nccl.h marks it deprecated; frameworks still call it, so Purlin must forward it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  ncclResetDebugInit();
#pragma GCC diagnostic pop
  EXPECT_EQ(fake_.calls_named("ResetDebugInit").size(), 1u);
}

}  // namespace
}  // namespace forwarding
