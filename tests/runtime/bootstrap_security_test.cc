// Connections that must not join a group: wrong secrets, silent strangers, duplicate ranks and
// disagreeing nranks. In every case the legitimate ranks must still form their group.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

using testing::join_and_exercise;
using testing::run_ranks_in_threads;

class BootstrapSecurity : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }
};

ncclUniqueId with_flipped_secret(const ncclUniqueId& id) {
  UniqueIdContents c;
  EXPECT_TRUE(decode_unique_id(id, &c));
  c.secret.bytes[5] ^= 0x40;
  ncclUniqueId forged;
  encode_unique_id(c, &forged);
  return forged;
}

// True once the other side has closed `fd` (EOF or reset) within `limit`.
bool closed_by_peer(int fd, std::chrono::seconds limit) {
  uint8_t buf[64];
  const net::Deadline deadline = net::Clock::now() + limit;
  for (;;) {
    pollfd p = {fd, POLLIN, 0};
    if (net::poll_until(&p, 1, deadline) <= 0) return false;
    size_t n = 0;
    net::Io io = net::read_some(fd, buf, sizeof(buf), &n);
    if (io == net::Io::kClosed || io == net::Io::kError) return true;
  }
}

TEST_F(BootstrapSecurity, RootRejectsWrongSecretAndIgnoresStrangers) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  UniqueIdContents c;
  ASSERT_TRUE(decode_unique_id(id, &c));
  const net::Deadline deadline = net::deadline_after(5);

  // A stranger that connects and never speaks must not hold up the root.
  net::Socket silent;
  ASSERT_EQ(net::connect_to(c.root, deadline, nullptr, net::Refused::kRetry, &silent), ncclSuccess);

  // A forged hello: right shape, wrong secret.
  net::Socket forger;
  ASSERT_EQ(net::connect_to(c.root, deadline, nullptr, net::Refused::kRetry, &forger), ncclSuccess);
  wire::RootHello hello{wire::kRootHelloMagic, c.secret, 0, 4, c.root.to_wire()};
  hello.secret.bytes[0] ^= 1;
  ASSERT_EQ(net::send_all(forger.fd(), &hello, sizeof(hello), deadline, nullptr, "forged hello"), ncclSuccess);
  EXPECT_TRUE(closed_by_peer(forger.fd(), std::chrono::seconds(5)));

  // Garbage of hello size.
  net::Socket garbage;
  ASSERT_EQ(net::connect_to(c.root, deadline, nullptr, net::Refused::kRetry, &garbage), ncclSuccess);
  std::vector<uint8_t> junk(sizeof(wire::RootHello), 0x5A);
  ASSERT_EQ(net::send_all(garbage.fd(), junk.data(), junk.size(), deadline, nullptr, "junk"), ncclSuccess);
  EXPECT_TRUE(closed_by_peer(garbage.fd(), std::chrono::seconds(5)));

  EXPECT_EQ(run_ranks_in_threads(4, [&](int r) { return join_and_exercise(id, r, 4); }), "");
}

TEST_F(BootstrapSecurity, ForgedIdFailsWhileTheGroupForms) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  const ncclUniqueId forged = with_flipped_secret(id);
  ASSERT_TRUE(unique_id_valid(forged));  // well-formed; only the secret is wrong
  ncclResult_t forged_result = ncclSuccess;
  std::thread intruder([&] {
    std::unique_ptr<Bootstrap> b;
    forged_result = Bootstrap::create(forged, 0, 4, &b);
  });
  EXPECT_EQ(run_ranks_in_threads(4, [&](int r) { return join_and_exercise(id, r, 4); }), "");
  intruder.join();
  EXPECT_EQ(forged_result, ncclRemoteError);
}

// The same check on rank-to-rank connections, which carry the secret too.
TEST_F(BootstrapSecurity, PeerRejectsWrongSecret) {
  net::LocalAddress lo;
  ASSERT_EQ(net::choose_local_address(&lo), ncclSuccess);
  std::vector<net::Address> addrs(2);
  net::Socket l0, l1;
  ASSERT_EQ(net::listen_on(lo.addr, &l0, &addrs[0]), ncclSuccess);
  ASSERT_EQ(net::listen_on(lo.addr, &l1, &addrs[1]), ncclSuccess);
  Secret secret{};
  secret.bytes[3] = 9;
  std::unique_ptr<Mesh> m0, m1;
  ASSERT_EQ(Mesh::create(0, addrs, secret, std::move(l0), 5, &m0), ncclSuccess);
  ASSERT_EQ(Mesh::create(1, addrs, secret, std::move(l1), 5, &m1), ncclSuccess);

  net::Socket forger;
  ASSERT_EQ(net::connect_to(addrs[1], net::deadline_after(5), nullptr, net::Refused::kRetry, &forger), ncclSuccess);
  wire::PeerHello hello{wire::kPeerHelloMagic, secret, 0, 1};
  hello.secret.bytes[3] ^= 1;
  const wire::FrameHeader header{7, static_cast<uint32_t>(wire::Channel::kUser), sizeof(int)};
  const int bogus = -1;
  ASSERT_EQ(net::send_all(forger.fd(), &hello, sizeof(hello), net::deadline_after(5), nullptr, "hello"), ncclSuccess);
  ASSERT_EQ(net::send_all(forger.fd(), &header, sizeof(header), net::deadline_after(5), nullptr, "hdr"), ncclSuccess);
  ASSERT_EQ(net::send_all(forger.fd(), &bogus, sizeof(bogus), net::deadline_after(5), nullptr, "body"), ncclSuccess);

  const int real = 1234;
  int got = 0;
  ASSERT_EQ(m0->send(1, wire::Channel::kUser, 7, &real, sizeof(real)), ncclSuccess);
  ASSERT_EQ(m1->recv(0, wire::Channel::kUser, 7, &got, sizeof(got)), ncclSuccess);
  EXPECT_EQ(got, 1234);
  EXPECT_TRUE(closed_by_peer(forger.fd(), std::chrono::seconds(5)));
}

TEST_F(BootstrapSecurity, DuplicateRankIsRefused) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::string early;
  std::thread first([&] {
    early = run_ranks_in_threads(2, [&](int r) {
      std::unique_ptr<Bootstrap> b;
      ncclResult_t res = Bootstrap::create(id, r, 3, &b);
      return res == ncclSuccess ? testing::exercise(*b) : "create returned " + std::to_string(res);
    });
  });
  // Ranks 0 and 1 have joined; the group still waits for rank 2, so the root is certainly there.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::unique_ptr<Bootstrap> dup;
  EXPECT_EQ(Bootstrap::create(id, 1, 3, &dup), ncclInvalidArgument);
  EXPECT_EQ(dup, nullptr);
  EXPECT_EQ(join_and_exercise(id, 2, 3), "");
  first.join();
  EXPECT_EQ(early, "");
}

TEST_F(BootstrapSecurity, InconsistentNranksIsRefused) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  std::string rank0;
  std::thread first([&] { rank0 = join_and_exercise(id, 0, 3); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::unique_ptr<Bootstrap> wrong;
  EXPECT_EQ(Bootstrap::create(id, 1, 4, &wrong), ncclInvalidArgument);
  EXPECT_EQ(run_ranks_in_threads(2, [&](int r) { return join_and_exercise(id, r + 1, 3); }), "");
  first.join();
  EXPECT_EQ(rank0, "");
}

}  // namespace
}  // namespace purlin::runtime
