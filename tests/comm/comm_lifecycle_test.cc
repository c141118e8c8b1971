// Communicator creation without any GPU or real NCCL: Purlin's own bootstrap forms the
// group. Covers the nccl-tests pattern (one thread creating every rank inside a group),
// threads, ncclCommInitAll, nonblocking init, split, shrink and grow.
#include <gtest/gtest.h>
#include <nccl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

ncclResult_t wait_ready(ncclComm_t c) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  ncclResult_t st = ncclInProgress;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ncclCommGetAsyncError(c, &st) != ncclSuccess) return ncclInternalError;
    if (st != ncclInProgress) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return st;
}

void expect_identity(const std::vector<ncclComm_t>& comms) {
  for (size_t i = 0; i < comms.size(); ++i) {
    int count = -1, rank = -1;
    ASSERT_NE(comms[i], nullptr);
    EXPECT_EQ(ncclCommCount(comms[i], &count), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(comms[i], &rank), ncclSuccess);
    EXPECT_EQ(count, static_cast<int>(comms.size()));
    EXPECT_EQ(rank, static_cast<int>(i));
  }
}

void destroy_all(std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) {
    if (c != nullptr) {
      EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
    }
  }
}

TEST(CommLifecycle, OneThreadInitsFourRanksInsideAGroup) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(4, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(ncclCommInitRank(&comms[r], 4, id, r), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  expect_identity(comms);
  destroy_all(comms);
}

TEST(CommLifecycle, NestedGroupsCompleteAtTheOutermostEnd) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclCommInitRank(&comms[0], 2, id, 0), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);  // inner: nothing runs yet
  ASSERT_EQ(ncclCommInitRank(&comms[1], 2, id, 1), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  expect_identity(comms);
  destroy_all(comms);
}

TEST(CommLifecycle, EightThreadsOneRankEach) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(8, nullptr);
  std::vector<ncclResult_t> res(8, ncclInternalError);
  std::vector<std::thread> threads;
  for (int r = 0; r < 8; ++r) threads.emplace_back([&, r] { res[r] = ncclCommInitRank(&comms[r], 8, id, r); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 8; ++r) EXPECT_EQ(res[r], ncclSuccess) << "rank " << r;
  expect_identity(comms);
  destroy_all(comms);
}

TEST(CommLifecycle, InitAllCreatesEveryRank) {
  std::vector<ncclComm_t> comms(3, nullptr);
  // Repeated devices: several ranks on one GPU is a supported Purlin mode. Without a
  // GPU the device numbers cannot be checked and are taken as given.
  const int devs[3] = {0, 0, 0};
  ASSERT_EQ(ncclCommInitAll(comms.data(), 3, devs), ncclSuccess);
  expect_identity(comms);
  destroy_all(comms);
}

// One process driving several GPUs, as nccl-tests -g N does: rank i runs on devlist[i], or on
// GPU i without a list, and a split child stays on its parent's GPU. Without a GPU the numbers
// are taken as given; with fewer GPUs than the list names they are refused (bad_argument_test).
TEST(CommLifecycle, InitAllPutsRankIOnItsDevlistEntryAndSplitsKeepTheDevice) {
  const std::vector<int> devs = {3, 1, 2, 0};
  std::vector<ncclComm_t> listed(4, nullptr), counted(4, nullptr), children(4, nullptr);
  const ncclResult_t made = ncclCommInitAll(listed.data(), 4, devs.data());
  if (made == ncclInvalidArgument) GTEST_SKIP() << "GPUs visible, but fewer than the 4 the list names";
  ASSERT_EQ(made, ncclSuccess);
  ASSERT_EQ(ncclCommInitAll(counted.data(), 4, nullptr), ncclSuccess);
  expect_identity(listed);
  expect_identity(counted);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 4; ++r) ASSERT_EQ(ncclCommSplit(listed[r], r % 2, r, &children[r], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 4; ++r) {
    int device = -1;
    EXPECT_EQ(ncclCommCuDevice(listed[r], &device), ncclSuccess);
    EXPECT_EQ(device, devs[r]) << "rank " << r << " of the listed communicator";
    EXPECT_EQ(ncclCommCuDevice(counted[r], &device), ncclSuccess);
    EXPECT_EQ(device, r) << "rank " << r << " without a device list";
    EXPECT_EQ(ncclCommCuDevice(children[r], &device), ncclSuccess);
    EXPECT_EQ(device, devs[r]) << "the split child of rank " << r;
  }
  destroy_all(children);
  destroy_all(counted);
  destroy_all(listed);
}

TEST(CommLifecycle, NonblockingInitReportsProgressThenSuccess) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  for (int r = 0; r < 2; ++r) {
    ncclResult_t res = ncclCommInitRankConfig(&comms[r], 2, id, r, &config);
    EXPECT_TRUE(res == ncclInProgress || res == ncclSuccess) << res;
    ASSERT_NE(comms[r], nullptr);
  }
  for (ncclComm_t c : comms) EXPECT_EQ(wait_ready(c), ncclSuccess);
  expect_identity(comms);
  destroy_all(comms);
}

TEST(CommLifecycle, NonblockingGroupReturnsInProgress) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(3, nullptr);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 3; ++r) ASSERT_EQ(ncclCommInitRankConfig(&comms[r], 3, id, r, &config), ncclSuccess);
  ncclResult_t end = ncclGroupEnd();
  EXPECT_TRUE(end == ncclInProgress || end == ncclSuccess) << end;
  for (ncclComm_t c : comms) EXPECT_EQ(wait_ready(c), ncclSuccess);
  expect_identity(comms);
  destroy_all(comms);
}

TEST(CommLifecycle, SplitByColorOrdersByKey) {
  constexpr int n = 4;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> parents(n, nullptr), children(n, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), n, std::vector<int>(n, 0).data()), ncclSuccess);
  // Rank 3 opts out; ranks 0 and 2 form color 0 with keys reversing their order;
  // rank 1 is alone in color 1.
  const int color[n] = {0, 1, 0, NCCL_SPLIT_NOCOLOR};
  const int key[n] = {5, 0, 1, 0};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n; ++r) ASSERT_EQ(ncclCommSplit(parents[r], color[r], key[r], &children[r], nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(children[3], nullptr);
  int count = 0, rank = -1;
  ASSERT_EQ(ncclCommCount(children[0], &count), ncclSuccess);
  EXPECT_EQ(count, 2);
  ASSERT_EQ(ncclCommUserRank(children[0], &rank), ncclSuccess);
  EXPECT_EQ(rank, 1);  // key 5 sorts after rank 2's key 1
  ASSERT_EQ(ncclCommUserRank(children[2], &rank), ncclSuccess);
  EXPECT_EQ(rank, 0);
  ASSERT_EQ(ncclCommCount(children[1], &count), ncclSuccess);
  EXPECT_EQ(count, 1);
  destroy_all(children);
  destroy_all(parents);
}

// Ranks as processes; rank 0 is killed while the others are inside ncclCommSplit. Split runs two
// bootstrap allgathers back to back, and a survivor of the first may already be in the second:
// every survivor must still report a remote error, and its log must name the dead rank.
TEST(CommLifecycle, RankKilledDuringSplitIsARemoteErrorNamingIt) {
  constexpr int n = 3;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<pid_t> pids(n);
  std::vector<std::string> logs(n);
  for (int r = 0; r < n; ++r) {
    char path[] = "/tmp/purlin_split_XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    logs[r] = path;
    pids[r] = ::fork();
    ASSERT_GE(pids[r], 0);
    if (pids[r] == 0) {
      ::dup2(fd, 2);
      ncclComm_t comm = nullptr;
      if (ncclCommInitRank(&comm, n, id, r) != ncclSuccess) ::_exit(10);
      if (r == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the others are in the split by now
        ::raise(SIGKILL);
      }
      ncclComm_t child = nullptr;
      const ncclResult_t res = ncclCommSplit(comm, 0, r, &child, nullptr);
      // Stay a while: a survivor that left at once would be (rightly) blamed by the other one.
      std::this_thread::sleep_for(std::chrono::seconds(2));
      ::_exit(res == ncclRemoteError ? 0 : 20 + static_cast<int>(res));
    }
    ::close(fd);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  std::vector<int> status(n, -1);
  for (int r = 0; r < n; ++r) {
    while (::waitpid(pids[r], &status[r], WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pids[r], SIGKILL);
      ::waitpid(pids[r], &status[r], 0);
    }
  }
  EXPECT_TRUE(WIFSIGNALED(status[0]) && WTERMSIG(status[0]) == SIGKILL);
  for (int r = 1; r < n; ++r) {
    std::stringstream log;
    log << std::ifstream(logs[r]).rdbuf();
    EXPECT_TRUE(WIFEXITED(status[r]) && WEXITSTATUS(status[r]) == 0)
        << "rank " << r << " exit status " << status[r] << ":\n" << log.str();
    EXPECT_NE(log.str().find("failed: rank 0 ("), std::string::npos) << log.str();
  }
  for (const std::string& path : logs) ::unlink(path.c_str());
}

TEST(CommLifecycle, ShrinkExcludesRanks) {
  constexpr int n = 4;
  std::vector<ncclComm_t> parents(n, nullptr), children(n, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), n, std::vector<int>(n, 0).data()), ncclSuccess);
  int excluded[1] = {1};
  std::vector<ncclResult_t> res(n, ncclSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    if (r == 1) continue;  // the excluded rank does not take part (it may be dead)
    threads.emplace_back([&, r] { res[r] = ncclCommShrink(parents[r], excluded, 1, &children[r], nullptr, 0); });
  }
  for (auto& t : threads) t.join();
  const int expect_rank[n] = {0, -1, 1, 2};
  for (int r = 0; r < n; ++r) {
    if (r == 1) continue;
    ASSERT_EQ(res[r], ncclSuccess);
    int count = 0, rank = -1;
    ASSERT_EQ(ncclCommCount(children[r], &count), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(children[r], &rank), ncclSuccess);
    EXPECT_EQ(count, 3);
    EXPECT_EQ(rank, expect_rank[r]);
  }
  destroy_all(children);
  destroy_all(parents);
}

// Two ranks grow to four: the root (rank 1 here) takes the id from ncclCommGetUniqueId and
// hands it to the new ranks; the other existing rank passes NULL. Existing ranks keep their
// ranks, the new ones take those they were given.
TEST(CommLifecycle, GrowAddsRanks) {
  constexpr int n = 2, grown = 4;
  std::vector<ncclComm_t> parents(n, nullptr), children(grown, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), n, std::vector<int>(n, 0).data()), ncclSuccess);
  ncclUniqueId id;
  ASSERT_EQ(ncclCommGetUniqueId(parents[1], &id), ncclSuccess);
  std::vector<ncclResult_t> res(grown, ncclInternalError);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { res[0] = ncclCommGrow(parents[0], grown, nullptr, -1, &children[0], nullptr); });
  threads.emplace_back([&] { res[1] = ncclCommGrow(parents[1], grown, &id, -1, &children[1], nullptr); });
  for (int r = n; r < grown; ++r)
    threads.emplace_back([&, r] { res[r] = ncclCommGrow(nullptr, grown, &id, r, &children[r], nullptr); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < grown; ++r) ASSERT_EQ(res[r], ncclSuccess) << "rank " << r;
  expect_identity(children);
  destroy_all(children);
  destroy_all(parents);
}

// Exactly one existing rank is the root; every existing rank learns that alike and fails.
TEST(CommLifecycle, GrowWithoutARootFailsOnEveryExistingRank) {
  constexpr int n = 2;
  std::vector<ncclComm_t> parents(n, nullptr), children(n, nullptr);
  ASSERT_EQ(ncclCommInitAll(parents.data(), n, std::vector<int>(n, 0).data()), ncclSuccess);
  std::vector<ncclResult_t> res(n, ncclSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] { res[r] = ncclCommGrow(parents[r], 3, nullptr, -1, &children[r], nullptr); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(res[r], ncclInvalidUsage) << "rank " << r;
    EXPECT_EQ(children[r], nullptr);
  }
  // Arguments a rank can check alone fail at once.
  ncclComm_t child = nullptr;
  EXPECT_EQ(ncclCommGrow(parents[0], n, nullptr, -1, &child, nullptr), ncclInvalidArgument) << "no growth";
  EXPECT_EQ(ncclCommGrow(parents[0], 3, nullptr, 0, &child, nullptr), ncclInvalidArgument) << "existing rank with a rank";
  EXPECT_EQ(ncclCommGrow(nullptr, 3, nullptr, 2, &child, nullptr), ncclInvalidArgument) << "new rank without the id";
  destroy_all(parents);
}

TEST(CommLifecycle, DestroyedCommIsRejectedNotDereferenced) {
  ncclComm_t c = nullptr;
  const int dev = 0;
  ASSERT_EQ(ncclCommInitAll(&c, 1, &dev), ncclSuccess);
  ASSERT_EQ(ncclCommDestroy(c), ncclSuccess);
  int count = 0;
  EXPECT_EQ(ncclCommCount(c, &count), ncclInvalidArgument);
  EXPECT_EQ(ncclCommDestroy(c), ncclInvalidArgument);
}

// With no real NCCL, forwarded calls fail cleanly and say how to point at one.
TEST(CommLifecycle, ForwardingWithoutRealNcclFailsWithGuidance) {
  ncclComm_t c = nullptr;
  const int dev = 0;
  ASSERT_EQ(ncclCommInitAll(&c, 1, &dev), ncclSuccess);
  float buf[4] = {};
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, c, nullptr), ncclSystemError);
  EXPECT_NE(std::string(ncclGetLastError(c)).find("PURLIN_NCCL_LIBRARY"), std::string::npos);
  int version = 0;
  EXPECT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);  // the headers' version when no real NCCL exists
  EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
}

}  // namespace
