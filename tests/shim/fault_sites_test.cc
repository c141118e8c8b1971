// Failures deep inside the shim, injected where real ones arise (base/fault.h): inside the
// value-returning entry points (teams, rank translations, slot counts), at the allocation of a
// communicator, and in every kind of thread the shim starts (blocking, nonblocking and grouped
// init, a nonblocking group's background, the threads that create real communicators for a
// group's forwarded calls), including a thread that cannot start. Each fails the call it
// belongs to with one WARN naming it, a nonblocking communicator reports the failure through
// ncclCommGetAsyncError, and the process lives on; a retry with the same unique id succeeds.
//
// Runs in front of the fake NCCL, with 1-rank communicators, so that no peer waits on a
// rank that failed.
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "common/warn_lines.h"
#include "fault_arming.h"
#include "forwarding_fixture.h"
#include "nccl_api.h"

namespace {

using forwarding::Forwarding;
using forwarding::g_recv;
using forwarding::g_send;
using purlin::test::arm_faults;
using purlin::test::warn_lines;

// What a call printed: its number of Purlin WARN lines and the first of them.
struct Warns {
  int count = 0;
  std::string first;
};

class FaultSites : public Forwarding {
 protected:
  void TearDown() override {
    purlin::test::disarm_faults();
    Forwarding::TearDown();
  }

  // Runs `call` with fault injection armed at `spec`, capturing what it prints.
  template <class Call>
  static auto armed(const char* spec, Warns* warns, Call call) {
    arm_faults(spec);
    testing::internal::CaptureStderr();
    auto result = call();
    fflush(stderr);
    const std::string err = testing::internal::GetCapturedStderr();
    purlin::test::disarm_faults();
    warns->count = warn_lines(err, &warns->first);
    if (warns->count != 1) ADD_FAILURE() << spec << ": expected one WARN, stderr was:\n" << err;
    return result;
  }

  // Polls a nonblocking communicator until its init has ended; returns its state.
  static ncclResult_t wait_init(ncclComm_t c) {
    ncclResult_t state = ncclInProgress;
    for (int i = 0; i < 6000 && state == ncclInProgress; ++i) {
      if (ncclCommGetAsyncError(c, &state) != ncclSuccess) return ncclInternalError;
      if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return state;
  }

  // A failed init leaves its unique id unused: the id still forms a communicator (and its
  // bootstrap root ends instead of timing out later with a WARN of its own).
  static void expect_retry_succeeds(const ncclUniqueId& id) {
    ncclComm_t c = nullptr;
    ASSERT_EQ(ncclCommInitRank(&c, 1, id, 0), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }

  // ncclCommInitRank of a 1-rank communicator with `spec` armed, through a fresh unique id.
  static ncclResult_t init_rank_armed(const char* spec, ncclUniqueId* id, ncclComm_t* c, Warns* w) {
    EXPECT_EQ(ncclGetUniqueId(id), ncclSuccess);
    return armed(spec, w, [&] { return ncclCommInitRank(c, 1, *id, 0); });
  }

  static ncclConfig_t nonblocking() {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    return cfg;
  }

  static std::string says(const std::string& fn, const char* site) {
    return fn + ": internal error: fault injected at site '" + site + "'";
  }
};

// ---- Value-returning entry points: a deep failure is their documented failure value ------

TEST_F(FaultSites, TeamQueriesReturnNoTeamWhenCreatingTheRealCommunicatorThrows) {
  const std::pair<const char*, std::function<ncclTeam_t()>> queries[] = {
      {"ncclTeamWorld", [this] { return ncclTeamWorld(comm_); }},
      {"ncclTeamLsa", [this] { return ncclTeamLsa(comm_); }},
      {"ncclTeamRail", [this] { return ncclTeamRail(comm_); }},
      {"ncclTeamCft", [this] { return ncclTeamCft(comm_, NCCL_CFT_TEAM_FLAT); }},
      {"ncclTeamCftMultimem", [this] { return ncclTeamCftMultimem(comm_); }},
  };
  for (const auto& [fn, query] : queries) {
    Warns w;
    const ncclTeam_t t = armed("real_comm:1", &w, query);
    EXPECT_EQ(t.nRanks, 0) << fn;
    EXPECT_EQ(t.rank, 0) << fn;
    EXPECT_EQ(t.stride, 0) << fn;
    EXPECT_NE(w.first.find(says(fn, "real_comm")), std::string::npos) << w.first;
  }
  // The failure was not sticky: the real communicator forms at the next query.
  EXPECT_GT(ncclTeamWorld(comm_).nRanks, 0);
}

TEST_F(FaultSites, RankTranslationsReturnMinusOneWhenCreatingTheRealCommunicatorThrows) {
  const ncclTeam_t team{1, 0, 1};
  Warns w;
  EXPECT_EQ(armed("real_comm:1", &w, [&] { return ncclTeamRankToWorld(comm_, team, 0); }), -1);
  EXPECT_NE(w.first.find(says("ncclTeamRankToWorld", "real_comm")), std::string::npos) << w.first;
  EXPECT_EQ(armed("real_comm:1", &w, [&] { return ncclTeamRankToLsa(comm_, team, 0); }), -1);
  EXPECT_NE(w.first.find(says("ncclTeamRankToLsa", "real_comm")), std::string::npos) << w.first;
}

TEST_F(FaultSites, SlotCountIsZeroWhenFindingTheRealNcclThrows) {
  Warns w;
  EXPECT_EQ(armed("real_nccl:1", &w, [] { return ncclLLA2ACalcSlots(16, 8); }), 0);
  EXPECT_NE(w.first.find(says("ncclLLA2ACalcSlots", "real_nccl")), std::string::npos) << w.first;
  EXPECT_NE(ncclLLA2ACalcSlots(16, 8), 0) << "the fake answers once nothing is armed";
}

// ---- Allocation ----------------------------------------------------------------------------

TEST_F(FaultSites, CommunicatorAllocationFailureIsASystemError) {
  ncclUniqueId id;
  ncclComm_t c = nullptr;
  Warns w;
  EXPECT_EQ(init_rank_armed("new_comm:1", &id, &c, &w), ncclSystemError);
  EXPECT_NE(w.first.find("ncclCommInitRank: out of host memory"), std::string::npos) << w.first;
  EXPECT_EQ(c, nullptr);
  expect_retry_succeeds(id);
}

// InitAll opens a group of its own: a failure among its communicators must close that group
// and leave no recorded init behind, or the application's next group would run it.
TEST_F(FaultSites, InitAllAllocationFailureLeavesNoGroupOpen) {
  ncclComm_t comms[2] = {nullptr, nullptr};
  Warns w;
  EXPECT_EQ(armed("new_comm:2", &w, [&] { return ncclCommInitAll(comms, 2, nullptr); }), ncclSystemError);
  EXPECT_NE(w.first.find("ncclCommInitAll: out of host memory"), std::string::npos) << w.first;
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_EQ(comms[1], nullptr);
  testing::internal::CaptureStderr();
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage) << "InitAll left its group open";
  (void)testing::internal::GetCapturedStderr();
}

// ---- Thread bodies -------------------------------------------------------------------------

TEST_F(FaultSites, BlockingInitThreadFailsTheCall) {
  ncclUniqueId id;
  ncclComm_t c = reinterpret_cast<ncclComm_t>(g_send);
  Warns w;
  EXPECT_EQ(init_rank_armed("thread:1", &id, &c, &w), ncclInternalError);
  EXPECT_NE(w.first.find(says("ncclCommInitRank", "thread")), std::string::npos) << w.first;
  EXPECT_EQ(c, nullptr) << "a failed blocking init hands back no communicator";
  expect_retry_succeeds(id);
}

TEST_F(FaultSites, NonblockingInitThreadPublishesItsFailure) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclConfig_t cfg = nonblocking();
  ncclComm_t c = nullptr;
  Warns w;
  const ncclResult_t state = armed("thread:1", &w, [&] {
    EXPECT_EQ(ncclCommInitRankConfig(&c, 1, id, 0, &cfg), ncclInProgress);
    return wait_init(c);
  });
  EXPECT_EQ(state, ncclInternalError) << "the application would otherwise poll ncclInProgress forever";
  EXPECT_NE(w.first.find(says("ncclCommInitRankConfig", "thread")), std::string::npos) << w.first;
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  expect_retry_succeeds(id);
}

TEST_F(FaultSites, GroupedInitThreadFailsGroupEndAndItsCommunicator) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t c = nullptr;
  Warns w;
  const ncclResult_t end = armed("thread:1", &w, [&] {
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclCommInitRank(&c, 1, id, 0), ncclSuccess);
    return ncclGroupEnd();
  });
  EXPECT_EQ(end, ncclInternalError);
  EXPECT_NE(w.first.find(says("ncclGroupEnd", "thread")), std::string::npos) << w.first;
  ncclResult_t state = ncclSuccess;
  EXPECT_EQ(ncclCommGetAsyncError(c, &state), ncclSuccess);
  EXPECT_EQ(state, ncclInternalError);
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  expect_retry_succeeds(id);
}

TEST_F(FaultSites, InitAllThreadFailureNamesInitAll) {
  ncclComm_t comms[1] = {nullptr};
  Warns w;
  EXPECT_EQ(armed("thread:1", &w, [&] { return ncclCommInitAll(comms, 1, nullptr); }), ncclInternalError);
  EXPECT_NE(w.first.find(says("ncclCommInitAll", "thread")), std::string::npos) << w.first;
  EXPECT_EQ(comms[0], nullptr);
}

// Passage 1 is the group's background thread, passage 2 the init thread it starts.
TEST_F(FaultSites, NonblockingGroupThreadsPublishTheirFailure) {
  for (const char* spec : {"thread:1", "thread:2"}) {
    ncclUniqueId id;
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    ncclConfig_t cfg = nonblocking();
    ncclComm_t c = nullptr;
    Warns w;
    const ncclResult_t state = armed(spec, &w, [&] {
      EXPECT_EQ(ncclGroupStart(), ncclSuccess);
      EXPECT_EQ(ncclCommInitRankConfig(&c, 1, id, 0, &cfg), ncclSuccess);
      EXPECT_EQ(ncclGroupEnd(), ncclInProgress);
      return wait_init(c);
    });
    EXPECT_EQ(state, ncclInternalError) << spec;
    EXPECT_NE(w.first.find(says("ncclGroupEnd", "thread")), std::string::npos) << spec << ": " << w.first;
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
    expect_retry_succeeds(id);
  }
}

TEST_F(FaultSites, RealCommunicatorThreadOfAGroupFailsGroupEnd) {
  Warns w;
  const ncclResult_t end = armed("thread:1", &w, [&] {
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(g_send, g_recv, 4, ncclFloat32, ncclSum, comm_, nullptr), ncclSuccess);
    return ncclGroupEnd();
  });
  EXPECT_EQ(end, ncclInternalError);
  EXPECT_NE(w.first.find(says("ncclGroupEnd", "thread")), std::string::npos) << w.first;
  // The communicator is unharmed: the same call, grouped, now creates the real one and runs.
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(g_send, g_recv, 4, ncclFloat32, ncclSum, comm_, nullptr), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
}

TEST_F(FaultSites, ThreadThatCannotStartFailsTheCall) {
  ncclUniqueId id;
  ncclComm_t c = nullptr;
  Warns w;
  EXPECT_EQ(init_rank_armed("thread_start:1", &id, &c, &w), ncclInternalError);
  EXPECT_NE(w.first.find(says("ncclCommInitRank", "thread_start")), std::string::npos) << w.first;
  EXPECT_EQ(c, nullptr);

  // Nonblocking: the call itself reports it, and so does the communicator.
  ncclConfig_t cfg = nonblocking();
  EXPECT_EQ(armed("thread_start:1", &w, [&] { return ncclCommInitRankConfig(&c, 1, id, 0, &cfg); }),
            ncclInternalError);
  ASSERT_NE(c, nullptr);
  ncclResult_t state = ncclSuccess;
  EXPECT_EQ(ncclCommGetAsyncError(c, &state), ncclSuccess);
  EXPECT_EQ(state, ncclInternalError);
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  expect_retry_succeeds(id);
}

}  // namespace
