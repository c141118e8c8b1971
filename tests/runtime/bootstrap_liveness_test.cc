// Peer liveness and orderly departure: connect_all, lost_peer, farewell, await_farewells. A rank
// whose connections end without a farewell is reported (its process died); a rank that said
// farewell first is not; waiting for farewells is bounded and counts a dead peer as done.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"
#include "runtime/bootstrap/bootstrap.h"

namespace purlin::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class BootstrapLiveness : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }

  // `n` ranks of one group, each created on its own thread, all connected to each other.
  std::vector<std::unique_ptr<Bootstrap>> make_group(int n) {
    ncclUniqueId id;
    EXPECT_EQ(create_unique_id(&id), ncclSuccess);
    std::vector<std::unique_ptr<Bootstrap>> group(static_cast<size_t>(n));
    std::vector<ncclResult_t> results(static_cast<size_t>(n), ncclInternalError);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        auto& b = group[static_cast<size_t>(r)];
        results[static_cast<size_t>(r)] = Bootstrap::create(id, r, n, &b);
        if (results[static_cast<size_t>(r)] == ncclSuccess) results[static_cast<size_t>(r)] = b->connect_all();
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < n; ++r) EXPECT_EQ(results[static_cast<size_t>(r)], ncclSuccess) << "rank " << r;
    return group;
  }
};

// Polls lost_peer() as a watcher would, until it names someone or `bound` passes.
int poll_lost(Bootstrap& b, milliseconds bound) {
  const auto end = Clock::now() + bound;
  for (;;) {
    if (int lost = b.lost_peer(); lost >= 0 || Clock::now() >= end) return lost;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

TEST_F(BootstrapLiveness, NoOneIsLostWhileAllAreAlive) {
  auto group = make_group(3);
  for (auto& b : group) EXPECT_EQ(poll_lost(*b, milliseconds(100)), -1);
}

TEST_F(BootstrapLiveness, RankGoneWithoutFarewellIsNamedPromptly) {
  auto group = make_group(3);
  group[2].reset();  // its sockets close, as a dead process's do
  const auto start = Clock::now();
  EXPECT_EQ(poll_lost(*group[0], milliseconds(2000)), 2);
  EXPECT_EQ(poll_lost(*group[1], milliseconds(2000)), 2);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST_F(BootstrapLiveness, RankThatSaidFarewellIsNotLost) {
  auto group = make_group(3);
  EXPECT_TRUE(group[2]->farewell(milliseconds(1000)));
  group[2].reset();
  EXPECT_EQ(poll_lost(*group[0], milliseconds(200)), -1);
  EXPECT_EQ(poll_lost(*group[1], milliseconds(200)), -1);
  // Ranks leave one after another from one thread (ncclCommDestroy of ncclCommInitAll's
  // communicators): nobody waits for a rank that has not left yet.
  EXPECT_TRUE(group[0]->farewell(milliseconds(1000)));
  EXPECT_TRUE(group[1]->farewell(milliseconds(1000)));
  EXPECT_EQ(group[0]->await_farewells(milliseconds(5000)), ncclSuccess);
  EXPECT_EQ(group[1]->await_farewells(milliseconds(5000)), ncclSuccess);
}

TEST_F(BootstrapLiveness, AwaitingASilentLivePeerIsBounded) {
  auto group = make_group(2);
  group[0]->farewell(milliseconds(1000));
  const auto start = Clock::now();
  EXPECT_EQ(group[0]->await_farewells(milliseconds(300)), ncclRemoteError);
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(290));
  EXPECT_LT(took, milliseconds(1000));
}

TEST_F(BootstrapLiveness, DeadPeerCountsAsDeparted) {
  auto group = make_group(3);
  group[1].reset();
  group[0]->farewell(milliseconds(1000));
  group[2]->farewell(milliseconds(1000));
  const auto start = Clock::now();
  EXPECT_EQ(group[0]->await_farewells(milliseconds(5000)), ncclSuccess);
  EXPECT_EQ(group[2]->await_farewells(milliseconds(5000)), ncclSuccess);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

// A watcher must never stall the owner, nor the owner the watcher: while the owner waits in a
// call, lost_peer() answers -1 at once; the owner's call notices the loss itself, and the
// watcher sees it afterwards.
TEST_F(BootstrapLiveness, WatcherDoesNotWaitForABusyOwner) {
  auto group = make_group(2);
  ncclResult_t owner = ncclInternalError;
  std::thread t([&] {
    int x = 0;
    owner = group[0]->recv(1, 7, &x, sizeof(x));  // rank 1 never sends
  });
  std::this_thread::sleep_for(milliseconds(100));
  const auto start = Clock::now();
  EXPECT_EQ(group[0]->lost_peer(), -1);
  EXPECT_LT(Clock::now() - start, milliseconds(50));
  // Nor does leaving wait past its bound for the owner's call: it says nothing instead.
  const auto leave = Clock::now();
  EXPECT_FALSE(group[0]->farewell(milliseconds(100)));
  EXPECT_LT(Clock::now() - leave, milliseconds(500));
  group[1].reset();
  t.join();
  EXPECT_EQ(owner, ncclRemoteError);
  EXPECT_EQ(group[0]->blamed_peer(), 1);
  EXPECT_EQ(poll_lost(*group[0], milliseconds(1000)), 1);
}

// Ranks in separate processes: one is killed (SIGKILL, no chance to say anything), the other
// names it within a second.
TEST_F(BootstrapLiveness, KilledProcessIsNamedPromptly) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    std::unique_ptr<Bootstrap> b;
    if (Bootstrap::create(id, 1, 2, &b) != ncclSuccess || b->connect_all() != ncclSuccess) _exit(1);
    const char one = 1;
    (void)!write(ready[1], &one, 1);
    for (;;) pause();  // until killed
  }
  close(ready[1]);
  std::unique_ptr<Bootstrap> b;
  ASSERT_EQ(Bootstrap::create(id, 0, 2, &b), ncclSuccess);
  ASSERT_EQ(b->connect_all(), ncclSuccess);
  char one = 0;
  ASSERT_EQ(read(ready[0], &one, 1), 1);
  close(ready[0]);
  EXPECT_EQ(poll_lost(*b, milliseconds(200)), -1);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  const auto start = Clock::now();
  EXPECT_EQ(poll_lost(*b, milliseconds(3000)), 1);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  // The killed rank's kernels are gone with it: leaving does not wait for it.
  b->farewell(milliseconds(500));
  EXPECT_EQ(b->await_farewells(milliseconds(3000)), ncclSuccess);
}

}  // namespace
}  // namespace purlin::runtime
