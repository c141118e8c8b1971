// Groups that should form and work: ranks as threads, as processes, over IPv4 and IPv6.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/unique_id.h"

namespace purlin::runtime {
namespace {

using testing::join_and_exercise;
using testing::run_ranks_in_processes;
using testing::run_ranks_in_threads;

class BootstrapGroup : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { testing::use_loopback_env(); }
};

TEST_P(BootstrapGroup, RanksAsThreads) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  EXPECT_TRUE(unique_id_valid(id));
  EXPECT_EQ(run_ranks_in_threads(n, [&](int r) { return join_and_exercise(id, r, n); }), "");
}

TEST_P(BootstrapGroup, RanksAsProcesses) {
  const int n = GetParam();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  EXPECT_EQ(run_ranks_in_processes(n, [&](int r) { return join_and_exercise(id, r, n); }, std::chrono::seconds(25)),
            "");
}

INSTANTIATE_TEST_SUITE_P(Sizes, BootstrapGroup, ::testing::Values(2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "Ranks";
                         });

TEST(BootstrapGroupTest, SingleRankTalksToItself) {
  testing::use_loopback_env();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::unique_ptr<Bootstrap> b;
  ASSERT_EQ(Bootstrap::create(id, 0, 1, &b), ncclSuccess);
  EXPECT_EQ(testing::exercise(*b), "");
  const int sent = 42;
  int got = 0;
  ASSERT_EQ(b->send(0, 5, &sent, sizeof(sent)), ncclSuccess);
  ASSERT_EQ(b->recv(0, 5, &got, sizeof(got)), ncclSuccess);
  EXPECT_EQ(got, 42);
}

TEST(BootstrapGroupTest, Ipv6Loopback) {
  testing::use_loopback_env();
  int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 lo6{};
  lo6.sin6_family = AF_INET6;
  lo6.sin6_addr = in6addr_loopback;
  const bool has_ipv6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&lo6), sizeof(lo6)) == 0;
  if (probe >= 0) ::close(probe);
  if (!has_ipv6) GTEST_SKIP() << "no IPv6 loopback on this machine";
  ::setenv("PURLIN_SOCKET_FAMILY", "AF_INET6", 1);
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  UniqueIdContents contents;
  ASSERT_TRUE(decode_unique_id(id, &contents));
  EXPECT_EQ(contents.root.family(), AF_INET6);
  EXPECT_EQ(run_ranks_in_threads(4, [&](int r) { return join_and_exercise(id, r, 4); }), "");
}

// No interface setting: the default choice (first real IPv4 interface, else loopback) must work
// for ranks on this host.
TEST(BootstrapGroupTest, DefaultInterface) {
  testing::use_loopback_env();
  ::unsetenv("PURLIN_SOCKET_IFNAME");
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  EXPECT_EQ(run_ranks_in_threads(2, [&](int r) { return join_and_exercise(id, r, 2); }), "");
}

// The root thread serves one group and then goes away, closing its listener.
TEST(BootstrapGroupTest, RootClosesAfterGroupForms) {
  testing::use_loopback_env();
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  UniqueIdContents contents;
  ASSERT_TRUE(decode_unique_id(id, &contents));
  EXPECT_EQ(run_ranks_in_threads(2, [&](int r) { return join_and_exercise(id, r, 2); }), "");
  bool refused = false;
  for (int attempt = 0; attempt < 200 && !refused; ++attempt) {
    int fd = ::socket(contents.root.family(), SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    refused = ::connect(fd, contents.root.sa(), contents.root.len()) != 0 && errno == ECONNREFUSED;
    ::close(fd);
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(refused) << "the root still accepts connections after its group formed";
}

}  // namespace
}  // namespace purlin::runtime
