// Failure paths: bad arguments, timeouts, abort, size mismatches; and interface-name matching.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"

namespace purlin::runtime {
namespace {

using Clock = std::chrono::steady_clock;

class BootstrapErrors : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }

  // Two connected ranks, each created on its own thread (create blocks until both arrive).
  void make_pair(std::unique_ptr<Bootstrap>* b0, std::unique_ptr<Bootstrap>* b1) {
    ncclUniqueId id;
    ASSERT_EQ(create_unique_id(&id), ncclSuccess);
    ncclResult_t r1 = ncclInternalError;
    std::thread t([&] { r1 = Bootstrap::create(id, 1, 2, b1); });
    ASSERT_EQ(Bootstrap::create(id, 0, 2, b0), ncclSuccess);
    t.join();
    ASSERT_EQ(r1, ncclSuccess);
  }
};

TEST_F(BootstrapErrors, BadArgumentsAreInvalidArgument) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::unique_ptr<Bootstrap> b;
  EXPECT_EQ(Bootstrap::create(id, -1, 2, &b), ncclInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 2, 2, &b), ncclInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, 0, &b), ncclInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, -3, &b), ncclInvalidArgument);
  EXPECT_EQ(Bootstrap::create(id, 0, 2, nullptr), ncclInvalidArgument);
  EXPECT_EQ(create_unique_id(nullptr), ncclInvalidArgument);

  ncclUniqueId zeros;
  std::memset(&zeros, 0, sizeof(zeros));
  EXPECT_FALSE(unique_id_valid(zeros));
  EXPECT_EQ(Bootstrap::create(zeros, 0, 2, &b), ncclInvalidArgument);
  ncclUniqueId bad_magic = id;
  bad_magic.internal[0] ^= 1;
  EXPECT_FALSE(unique_id_valid(bad_magic));
  EXPECT_EQ(Bootstrap::create(bad_magic, 0, 2, &b), ncclInvalidArgument);
  EXPECT_EQ(b, nullptr);
}

TEST_F(BootstrapErrors, BadOperationArgumentsAreInvalidArgument) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::unique_ptr<Bootstrap> b;
  ASSERT_EQ(Bootstrap::create(id, 0, 1, &b), ncclSuccess);
  int x = 0;
  EXPECT_EQ(b->send(1, 0, &x, sizeof(x)), ncclInvalidArgument);
  EXPECT_EQ(b->send(-1, 0, &x, sizeof(x)), ncclInvalidArgument);
  EXPECT_EQ(b->recv(1, 0, &x, sizeof(x)), ncclInvalidArgument);
  EXPECT_EQ(b->send(0, 0, nullptr, 4), ncclInvalidArgument);
  EXPECT_EQ(b->broadcast(&x, sizeof(x), 1), ncclInvalidArgument);
  EXPECT_EQ(b->allgather(nullptr, 4), ncclInvalidArgument);
  EXPECT_EQ(b->recv(0, 0, &x, sizeof(x)), ncclInvalidUsage);  // from itself, nothing sent: would never come
}

TEST_F(BootstrapErrors, MissingRankTimesOut) {
  ::setenv("PURLIN_BOOTSTRAP_TIMEOUT", "1", 1);
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::unique_ptr<Bootstrap> b;
  const auto start = Clock::now();
  EXPECT_EQ(Bootstrap::create(id, 0, 2, &b), ncclRemoteError);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(b, nullptr);
}

TEST_F(BootstrapErrors, SilentPeerTimesOut) {
  ::setenv("PURLIN_BOOTSTRAP_TIMEOUT", "1", 1);
  std::unique_ptr<Bootstrap> b0, b1;
  make_pair(&b0, &b1);
  int x = 0;
  const auto start = Clock::now();
  EXPECT_EQ(b0->recv(1, 3, &x, sizeof(x)), ncclRemoteError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
}

TEST_F(BootstrapErrors, AbortWakesABlockedRecv) {
  std::unique_ptr<Bootstrap> b0, b1;
  make_pair(&b0, &b1);  // timeout 20 s: only abort can end the wait early
  ncclResult_t blocked = ncclSuccess;
  const auto start = Clock::now();
  std::thread waiter([&] {
    int x = 0;
    blocked = b0->recv(1, 3, &x, sizeof(x));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  b0->abort();
  waiter.join();
  EXPECT_EQ(blocked, ncclRemoteError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
  int x = 0;
  EXPECT_EQ(b0->send(1, 3, &x, sizeof(x)), ncclRemoteError);
  EXPECT_EQ(b0->barrier(), ncclRemoteError);
}

TEST_F(BootstrapErrors, SizeMismatchIsAnErrorAndTheStreamSurvives) {
  std::unique_ptr<Bootstrap> b0, b1;
  make_pair(&b0, &b1);
  const uint64_t eight = 8;
  uint8_t sixteen[16];
  ASSERT_EQ(b1->send(0, 1, &eight, sizeof(eight)), ncclSuccess);
  EXPECT_EQ(b0->recv(1, 1, sixteen, sizeof(sixteen)), ncclInvalidUsage);
  ASSERT_EQ(b1->send(0, 2, &eight, sizeof(eight)), ncclSuccess);
  uint64_t got = 0;
  EXPECT_EQ(b0->recv(1, 2, &got, sizeof(got)), ncclSuccess);
  EXPECT_EQ(got, 8u);
}

TEST_F(BootstrapErrors, PeerGoneIsRemoteError) {
  std::unique_ptr<Bootstrap> b0, b1;
  make_pair(&b0, &b1);
  const int x = 1;
  ASSERT_EQ(b1->send(0, 1, &x, sizeof(x)), ncclSuccess);
  b1.reset();
  int got = 0;
  EXPECT_EQ(b0->recv(1, 1, &got, sizeof(got)), ncclSuccess);  // sent before leaving: still delivered
  EXPECT_EQ(got, 1);
  const auto start = Clock::now();
  EXPECT_EQ(b0->recv(1, 2, &got, sizeof(got)), ncclRemoteError);
  // Never connected to rank 1 before: its listener is gone, so the connection is refused at once.
  EXPECT_EQ(b0->send(1, 3, &got, sizeof(got)), ncclRemoteError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
}

// ncclCommSplit's pattern: two consecutive allgathers of different sizes (votes, then unique
// ids), every rank taking part in the second even when the first failed. A rank killed before
// them must be reported, by every survivor and in both, as a remote error naming that rank, at
// once: not as a size mismatch between the two exchanges, and not after the timeout.
TEST_F(BootstrapErrors, PeerKilledBetweenCollectivesIsARemoteErrorNamingIt) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  const std::string result = testing::run_ranks_in_processes(
      3,
      [&](int rank) -> std::string {
        std::unique_ptr<Bootstrap> b;
        if (ncclResult_t r = Bootstrap::create(id, rank, 3, &b); r != ncclSuccess) return "create failed";
        uint64_t warmup[3] = {};
        if (b->allgather(warmup, sizeof(uint64_t)) != ncclSuccess) return "first allgather failed";
        if (rank == 0) ::raise(SIGKILL);
        const auto start = Clock::now();
        uint64_t votes[3] = {};
        const ncclResult_t first = b->allgather(votes, sizeof(uint64_t));
        const int first_blamed = b->blamed_peer();
        ncclUniqueId ids[3] = {};
        const ncclResult_t second = b->allgather(ids, sizeof(ncclUniqueId));
        const int second_blamed = b->blamed_peer();
        const double took = std::chrono::duration<double>(Clock::now() - start).count();
        // Stay alive a while: a survivor that left at once would be (rightly) blamed by the other.
        std::this_thread::sleep_for(std::chrono::seconds(2));
        if (first != ncclRemoteError || second != ncclRemoteError || first_blamed != 0 || second_blamed != 0 ||
            took > 5.0) {
          return "allgathers returned " + std::to_string(first) + " and " + std::to_string(second) +
                 ", blaming ranks " + std::to_string(first_blamed) + " and " + std::to_string(second_blamed) +
                 ", after " + std::to_string(took) + " s";
        }
        return "";
      },
      std::chrono::seconds(25));
  EXPECT_EQ(result, "rank 0 failed\n");  // killed, as intended; the survivors saw what they should
}

TEST(InterfaceFilterTest, PrefixExclusionAndExactMatch) {
  net::InterfaceFilter any("");
  EXPECT_TRUE(any.matches("eth0"));
  net::InterfaceFilter prefix("eth,ib");
  EXPECT_TRUE(prefix.matches("eth0"));
  EXPECT_TRUE(prefix.matches("ib1"));
  EXPECT_FALSE(prefix.matches("lo"));
  net::InterfaceFilter exclude("^docker,lo");
  EXPECT_TRUE(exclude.matches("eth0"));
  EXPECT_FALSE(exclude.matches("docker0"));
  EXPECT_FALSE(exclude.matches("lo"));
  net::InterfaceFilter exact("=eth0");
  EXPECT_TRUE(exact.matches("eth0"));
  EXPECT_FALSE(exact.matches("eth01"));
  net::InterfaceFilter exact_exclude("^=lo");
  EXPECT_FALSE(exact_exclude.matches("lo"));
  EXPECT_TRUE(exact_exclude.matches("lo1"));
}

TEST(InterfaceFilterTest, UnknownInterfaceIsAnError) {
  ::setenv("PURLIN_SOCKET_IFNAME", "=no-such-interface", 1);
  net::LocalAddress local;
  EXPECT_EQ(net::choose_local_address(&local), ncclSystemError);
  ncclUniqueId id;
  EXPECT_EQ(create_unique_id(&id), ncclSystemError);
  ::setenv("PURLIN_SOCKET_IFNAME", "lo", 1);
}

}  // namespace
}  // namespace purlin::runtime
