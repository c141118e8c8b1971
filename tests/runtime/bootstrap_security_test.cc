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
#include "bootstrap_wire_util.h"
#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

using testing::closed_by_peer;
using testing::dial;
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

TEST_F(BootstrapSecurity, RootRejectsWrongSecretAndIgnoresStrangers) {
  ncclUniqueId id;
  ASSERT_EQ(create_unique_id(&id), ncclSuccess);
  UniqueIdContents c;
  ASSERT_TRUE(decode_unique_id(id, &c));

  // A stranger that connects and never speaks must not hold up the root.
  net::Socket silent = dial(c.root);
  ASSERT_TRUE(silent.valid());

  // A well-formed hello, then a proof made with the wrong secret.
  net::Socket forger = dial(c.root);
  ASSERT_TRUE(forger.valid());
  wire::RootHello hello{{}, 0, 4, c.root.to_wire(), {}};
  Secret wrong = c.secret;
  wrong.bytes[0] ^= 1;
  bool root_proved = false;
  ASSERT_TRUE(testing::root_handshake(forger.fd(), hello, auth::root_key(wrong), &root_proved));
  EXPECT_FALSE(root_proved);  // the root's proof was made with the real secret
  EXPECT_TRUE(closed_by_peer(forger.fd(), std::chrono::seconds(5)));

  // Garbage of header and hello size.
  net::Socket garbage = dial(c.root);
  ASSERT_TRUE(garbage.valid());
  std::vector<uint8_t> junk(sizeof(wire::FrameHeader) + sizeof(wire::RootHello), 0x5A);
  ASSERT_TRUE(testing::send_bytes(garbage.fd(), junk.data(), junk.size()));
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

// The same check on rank-to-rank connections.
TEST_F(BootstrapSecurity, PeerRejectsWrongKey) {
  std::vector<net::Address> addrs;
  const auth::Key key = testing::test_key(9);
  std::vector<wire::Nonce> nonces;
  auto m = testing::make_meshes(2, key, &addrs, 5, &nonces);
  ASSERT_EQ(m.size(), 2u);

  net::Socket forger = dial(addrs[1]);
  ASSERT_TRUE(forger.valid());
  const wire::PeerHello hello{{}, 0, 1};
  ASSERT_TRUE(testing::peer_handshake(forger.fd(), hello, nonces[1], testing::test_key(10)));
  wire::FrameHeader header = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, sizeof(int));
  header.tag = 7;
  const int bogus = -1;
  ASSERT_TRUE(testing::send_bytes(forger.fd(), &header, sizeof(header)));
  ASSERT_TRUE(testing::send_bytes(forger.fd(), &bogus, sizeof(bogus)));

  const int real = 1234;
  int got = 0;
  ASSERT_EQ(m[0]->send(1, wire::Channel::kUser, 7, &real, sizeof(real)), ncclSuccess);
  ASSERT_EQ(m[1]->recv(0, wire::Channel::kUser, 7, &got, sizeof(got)), ncclSuccess);
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
