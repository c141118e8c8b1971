// Strangers who hold connections open: floods of silent connections, handshakes that never end,
// and a process with no descriptors left. The ranks must get through, and nothing may spin.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"
#include "bootstrap_wire_util.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/unique_id.h"

namespace purlin::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using testing::StrangerFlood;

constexpr int kStrangers = 1100;  // beyond the old cap of 1024 pending connections

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class BootstrapFlood : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }
  // Long enough that only eviction, not expiry, can make room for the ranks.
  testing::ScopedEnv hello_timeout_{"PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS", "60000"};
};

// Every rank exchanges a message with every other, twice (the second waits for each receiver's
// proof): the mesh works only if every pair got through.
std::string all_pairs(Mesh& m) {
  for (int round = 0; round < 2; ++round) {
    for (int p = 0; p < m.size(); ++p) {
      const int v = m.rank() * 100 + p + round * 10000;
      if (p != m.rank() && m.send(p, wire::Channel::kUser, round, &v, sizeof(v)) != ncclSuccess) return "send failed";
    }
    for (int p = 0; p < m.size(); ++p) {
      int v = -1;
      if (p == m.rank()) continue;
      if (m.recv(p, wire::Channel::kUser, round, &v, sizeof(v)) != ncclSuccess) return "recv failed";
      if (v != p * 100 + m.rank() + round * 10000) return "wrong value from rank " + std::to_string(p);
    }
  }
  return "";
}

// Runs 4 rank bodies on threads while kStrangers silent connections open to `target`, half of
// them before the ranks start; every rank must succeed within 10 s. Returns the ranks' time.
double ranks_past_strangers(const net::Address& target, const testing::RankBody& rank) {
  StrangerFlood flood(target, kStrangers, kStrangers / 2);
  const auto start = Clock::now();
  const std::string errors = testing::run_ranks_in_threads(4, rank);
  const double took = seconds_since(start);
  EXPECT_EQ(errors, "");
  EXPECT_LT(took, 10.0);
  EXPECT_EQ(flood.opened(std::chrono::seconds(20)), kStrangers);  // the strangers were all there
  return took;
}

TEST_F(BootstrapFlood, SilentStrangersAtTheRootDoNotLockOutRanks) {
  ncclUniqueId id;
  UniqueIdContents c;
  ASSERT_TRUE(testing::new_group(&id, &c));
  const double took = ranks_past_strangers(c.root, [&](int r) { return testing::join_and_exercise(id, r, 4); });
  std::printf("4 ranks joined past %d silent connections to the root in %.3f s\n", kStrangers, took);
}

TEST_F(BootstrapFlood, SilentStrangersAtAMeshListenerDoNotLockOutRanks) {
  std::vector<net::Address> addrs;
  auto m = testing::make_meshes(4, testing::test_key(3), &addrs);
  ASSERT_EQ(m.size(), 4u);
  const double took = ranks_past_strangers(addrs[0], [&](int r) { return all_pairs(*m[r]); });
  std::printf("4 ranks exchanged past %d silent connections to rank 0's listener in %.3f s\n", kStrangers, took);
}

TEST_F(BootstrapFlood, UnfinishedHandshakesExpire) {
  testing::ScopedEnv short_deadline("PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS", "300");
  ncclUniqueId id;
  UniqueIdContents c;
  ASSERT_TRUE(testing::new_group(&id, &c));
  net::Socket silent = testing::dial(c.root);
  ASSERT_TRUE(silent.valid());
  auto start = Clock::now();
  EXPECT_TRUE(testing::closed_by_peer(silent.fd(), std::chrono::milliseconds(3000)));
  EXPECT_GE(seconds_since(start), 0.25);

  // A rank's listener too, while the rank waits in a call (the only time it serves connections).
  std::vector<net::Address> addrs;
  auto m = testing::make_meshes(2, testing::test_key(4), &addrs, 2);
  ASSERT_EQ(m.size(), 2u);
  std::thread waiter([&] {
    int x = 0;
    EXPECT_EQ(m[0]->recv(1, wire::Channel::kUser, 1, &x, sizeof(x)), ncclRemoteError);  // rank 1 never sends
  });
  silent = testing::dial(addrs[0]);
  ASSERT_TRUE(silent.valid());
  start = Clock::now();
  EXPECT_TRUE(testing::closed_by_peer(silent.fd(), std::chrono::milliseconds(1900)));
  EXPECT_GE(seconds_since(start), 0.25);
  waiter.join();
}

// Out of descriptors, accept() fails while the connection stays queued: a listener polled again
// at once would spin. A forked child fills its descriptor table, then the parent queues
// connections on the child's root listener and on a rank's listener while the rank waits in a
// recv; the child must stay nearly idle and warn at most once per second per listener.
TEST(BootstrapDescriptors, ExhaustionNeitherSpinsNorFloodsTheLog) {
  testing::use_loopback_env();
  constexpr int kWaitS = 3;
  char log_path[] = "/tmp/purlin_emfile_XXXXXX";
  const int log_fd = ::mkstemp(log_path);
  ASSERT_GE(log_fd, 0);
  int report[2], go[2];
  ASSERT_EQ(::pipe(report), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(log_fd, 2);  // the log writes WARNs to stderr
    ncclUniqueId id;
    std::vector<net::Address> addrs;
    auto m = testing::make_meshes(2, testing::test_key(5), &addrs, kWaitS);
    if (create_unique_id(&id) != ncclSuccess || m.size() != 2) ::_exit(2);
    const net::WireAddress mesh_addr = addrs[0].to_wire();
    (void)!::write(report[1], &id, sizeof(id));
    (void)!::write(report[1], &mesh_addr, sizeof(mesh_addr));
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = 256;
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) ::_exit(3);
    while (::dup(0) >= 0) {
    }
    char byte = 0;
    (void)!::write(report[1], "f", 1);
    (void)!::read(go[0], &byte, 1);
    rusage before{}, after{};
    ::getrusage(RUSAGE_SELF, &before);
    const auto start = Clock::now();
    int x = 0;
    m[0]->recv(1, wire::Channel::kUser, 1, &x, sizeof(x));  // waits kWaitS seconds: rank 1 never sends
    ::getrusage(RUSAGE_SELF, &after);
    const double wall = seconds_since(start);
    auto cpu = [](const rusage& u) {
      return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
    };
    const double result[2] = {(cpu(after) - cpu(before)) / wall, wall};
    (void)!::write(report[1], result, sizeof(result));
    ::_exit(0);
  }
  ::close(report[1]);
  ncclUniqueId id;
  net::WireAddress mesh_wire;
  char full = 0;
  ASSERT_EQ(::read(report[0], &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
  ASSERT_EQ(::read(report[0], &mesh_wire, sizeof(mesh_wire)), static_cast<ssize_t>(sizeof(mesh_wire)));
  ASSERT_EQ(::read(report[0], &full, 1), 1);
  UniqueIdContents c;
  net::Address mesh_addr;
  ASSERT_TRUE(decode_unique_id(id, &c));
  ASSERT_TRUE(net::Address::from_wire(mesh_wire, &mesh_addr));
  std::vector<net::Socket> queued;
  for (int i = 0; i < 8; ++i) {
    queued.push_back(testing::dial(c.root));  // complete in the kernel's backlog
    queued.push_back(testing::dial(mesh_addr));
  }
  (void)!::write(go[1], "g", 1);
  double result[2] = {-1, 0};
  const ssize_t got = ::read(report[0], result, sizeof(result));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof(result)));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const double cpu_share = result[0], wall = result[1];

  std::ifstream log(log_path);
  int root_warns = 0, rank_warns = 0;
  for (std::string line; std::getline(log, line);) {
    if (line.find("accept failed") == std::string::npos) continue;
    if (line.find("bootstrap root") != std::string::npos) ++root_warns;
    if (line.find("bootstrap rank 0") != std::string::npos) ++rank_warns;
  }
  ::unlink(log_path);
  ::close(log_fd);
  EXPECT_GE(wall, kWaitS - 0.5);
  EXPECT_LT(cpu_share, 0.2) << "the child used " << cpu_share * 100 << "% of a core while out of descriptors";
  // At least one: the test must really have run the process out of descriptors.
  EXPECT_GE(root_warns, 1);
  EXPECT_GE(rank_warns, 1);
  EXPECT_LE(root_warns, wall);
  EXPECT_LE(rank_warns, wall);
  std::printf("out of descriptors for %.2f s: %.1f%% CPU, %d root and %d rank accept WARNs\n", wall,
              cpu_share * 100, root_warns, rank_warns);
}

}  // namespace
}  // namespace purlin::runtime
