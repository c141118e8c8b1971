// Connections that must not join a group, or pass for a part of it: wrong secrets, silent
// strangers, duplicate ranks and disagreeing nranks (even with the secret), fake roots and fake
// peers. In every case the legitimate ranks must still form their group, undisturbed.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
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
#include "runtime/bootstrap/frame.h"
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
  UniqueIdContents c;
  ASSERT_TRUE(testing::new_group(&id, &c));

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

bool contains(const std::vector<uint8_t>& hay, const void* needle, size_t len) {
  const auto* n = static_cast<const uint8_t*>(needle);
  return std::search(hay.begin(), hay.end(), n, n + len) != hay.end();
}

// A process listening at the root's address without the secret: the rank must notice before it
// proves anything, and must never have sent the secret.
TEST_F(BootstrapSecurity, RankDetectsAFakeRoot) {
  net::LocalAddress lo;
  ASSERT_EQ(net::choose_local_address(&lo), ncclSuccess);
  net::Socket fake_listener;
  UniqueIdContents c;
  ASSERT_EQ(net::listen_on(lo.addr, &fake_listener, &c.root), ncclSuccess);
  ASSERT_EQ(auth::random_bytes(&c.secret, sizeof(c.secret)), ncclSuccess);
  ncclUniqueId id;
  encode_unique_id(c, &id);

  ncclResult_t result = ncclSuccess;
  std::unique_ptr<Bootstrap> b;
  const auto start = net::Clock::now();
  std::thread rank([&] { result = Bootstrap::create(id, 0, 2, &b); });
  wire::FrameReader reader;
  net::Socket conn = testing::accept_first_frame(
      fake_listener.fd(), wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootHello, sizeof(wire::RootHello)),
      &reader);
  ASSERT_TRUE(conn.valid());
  const auto hello = reader.body_as<wire::RootHello>();
  EXPECT_FALSE(contains(reader.body(), &c.secret, sizeof(c.secret))) << "the hello carries the secret";
  // The best a fake root can do: a challenge under a key it guessed.
  Secret guess{};
  wire::Challenge ch{};
  ch.mac = auth::prove(auth::root_key(guess), auth::Role::kRoot, &hello, sizeof(hello), ch.nonce);
  ASSERT_TRUE(testing::send_frame(conn.fd(), wire::kRootMagic, wire::FrameType::kChallenge, &ch, sizeof(ch)));
  const std::vector<uint8_t> after = testing::drain(conn.fd(), std::chrono::milliseconds(5000)).bytes;
  rank.join();
  EXPECT_EQ(result, ncclRemoteError);
  EXPECT_EQ(b, nullptr);
  EXPECT_TRUE(after.empty()) << "the rank sent " << after.size() << " bytes (a proof?) to a fake root";
  EXPECT_LT(std::chrono::duration<double>(net::Clock::now() - start).count(), 5.0);
}

// A connection that knows the secret and claims a rank already taken, or another nranks, is
// refused; the rank's holder and the group are not disturbed.
TEST_F(BootstrapSecurity, ClaimsWithTheSecretOnATakenRankOrAnotherNranksAreRefused) {
  ncclUniqueId id;
  UniqueIdContents c;
  ASSERT_TRUE(testing::new_group(&id, &c));
  std::string early;
  std::thread first([&] {
    early = run_ranks_in_threads(2, [&](int r) { return join_and_exercise(id, r, 3); });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // ranks 0 and 1 have joined
  const struct {
    int rank, nranks;
    wire::RootStatus expected;
  } claims[] = {{1, 3, wire::RootStatus::kDuplicateRank}, {2, 5, wire::RootStatus::kNranksMismatch}};
  for (const auto& claim : claims) {
    net::Socket s = dial(c.root);
    ASSERT_TRUE(s.valid());
    wire::RootHello hello{{}, claim.rank, claim.nranks, c.root.to_wire(), {}};
    ASSERT_EQ(auth::random_bytes(&hello.nonce, sizeof(hello.nonce)), ncclSuccess);
    bool root_proved = false;
    ASSERT_TRUE(testing::root_handshake(s.fd(), hello, auth::root_key(c.secret), &root_proved));
    EXPECT_TRUE(root_proved);
    wire::FrameReader reader;
    ASSERT_EQ(wire::recv_frame(s.fd(), reader,
                               wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootReply,
                                                    sizeof(wire::RootReply)),
                               net::deadline_after(5), nullptr, "the root", "a claim"),
              ncclSuccess);
    EXPECT_EQ(reader.body_as<wire::RootReply>().status, static_cast<int32_t>(claim.expected));
    EXPECT_TRUE(closed_by_peer(s.fd(), std::chrono::seconds(5)));
  }
  EXPECT_EQ(join_and_exercise(id, 2, 3), "");
  first.join();
  EXPECT_EQ(early, "");
}

// In the mesh: a second connection claiming a connected rank, even one made with the mesh key,
// is refused and the holder keeps its connection; someone who knows only the group secret (the
// id) cannot connect as any rank at all.
TEST_F(BootstrapSecurity, MeshRefusesSecondClaimsAndHoldersOfTheSecretAlone) {
  Secret secret{};
  secret.bytes[1] = 42;
  wire::Nonce group{};
  group.bytes[2] = 7;
  const auth::Key key = auth::mesh_key(secret, group);
  std::vector<net::Address> addrs;
  std::vector<wire::Nonce> nonces;
  auto m = testing::make_meshes(2, key, &addrs, 5, &nonces);
  ASSERT_EQ(m.size(), 2u);

  // The secret alone, claiming rank 0 before the real rank 0 has connected.
  net::Socket outsider = dial(addrs[1]);
  ASSERT_TRUE(outsider.valid());
  const wire::PeerHello as_rank0{{}, 0, 1};
  ASSERT_TRUE(testing::peer_handshake(outsider.fd(), as_rank0, nonces[1], auth::root_key(secret)));

  const int first = 1234, second = 5678;
  int got = 0;
  ASSERT_EQ(m[0]->send(1, wire::Channel::kUser, 7, &first, sizeof(first)), ncclSuccess);
  ASSERT_EQ(m[1]->recv(0, wire::Channel::kUser, 7, &got, sizeof(got)), ncclSuccess);
  EXPECT_EQ(got, 1234);
  EXPECT_TRUE(closed_by_peer(outsider.fd(), std::chrono::seconds(5)));

  // With the mesh key, claiming rank 0 again.
  net::Socket impostor = dial(addrs[1]);
  ASSERT_TRUE(impostor.valid());
  wire::PeerHello again{{}, 0, 1};
  again.nonce.bytes[0] = 1;
  ASSERT_TRUE(testing::peer_handshake(impostor.fd(), again, nonces[1], key));
  wire::FrameHeader h = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, sizeof(int));
  h.tag = 8;
  const int bogus = -1;
  ASSERT_TRUE(testing::send_bytes(impostor.fd(), &h, sizeof(h)));
  ASSERT_TRUE(testing::send_bytes(impostor.fd(), &bogus, sizeof(bogus)));
  std::thread rank1([&] { EXPECT_EQ(m[1]->recv(0, wire::Channel::kUser, 8, &got, sizeof(got)), ncclSuccess); });
  EXPECT_FALSE(testing::peer_accepted(impostor.fd(), again, nonces[1], key));  // closed, no proof
  ASSERT_EQ(m[0]->send(1, wire::Channel::kUser, 8, &second, sizeof(second)), ncclSuccess);
  rank1.join();
  EXPECT_EQ(got, 5678);
}

// A process at a peer's address without the mesh key: the connecting rank's first message goes
// out with its handshake (so a send never waits for the receiver), but the fake's proof fails
// and nothing more is sent to it.
TEST_F(BootstrapSecurity, RankDetectsAFakePeer) {
  net::LocalAddress lo;
  ASSERT_EQ(net::choose_local_address(&lo), ncclSuccess);
  std::vector<Mesh::PeerAddress> peers(2);
  net::Socket l0, fake;
  ASSERT_EQ(net::listen_on(lo.addr, &l0, &peers[0].addr), ncclSuccess);
  ASSERT_EQ(net::listen_on(lo.addr, &fake, &peers[1].addr), ncclSuccess);
  peers[1].accept_nonce.bytes[0] = 3;
  std::unique_ptr<Mesh> m0;
  ASSERT_EQ(Mesh::create(0, peers, testing::test_key(11), std::move(l0), 5, &m0), ncclSuccess);
  const int one = 1, two = 2;
  ASSERT_EQ(m0->send(1, wire::Channel::kUser, 1, &one, sizeof(one)), ncclSuccess);
  wire::FrameReader reader;
  net::Socket conn = testing::accept_first_frame(
      fake.fd(), wire::expect_exactly(wire::kPeerMagic, wire::FrameType::kPeerHello, sizeof(wire::PeerHello)),
      &reader);
  ASSERT_TRUE(conn.valid());
  const auto hello = reader.body_as<wire::PeerHello>();
  const wire::Proof guess{auth::prove(testing::test_key(12), auth::Role::kAcceptor, &hello, sizeof(hello),
                                      peers[1].accept_nonce)};
  ASSERT_TRUE(testing::send_frame(conn.fd(), wire::kPeerMagic, wire::FrameType::kProof, &guess, sizeof(guess)));
  EXPECT_EQ(m0->send(1, wire::Channel::kUser, 2, &two, sizeof(two)), ncclRemoteError);
  EXPECT_EQ(m0->blamed(), 1);
  m0.reset();
  // The proof frame and the first message, and not the second.
  const size_t proof_and_first = 2 * sizeof(wire::FrameHeader) + sizeof(wire::Proof) + sizeof(one);
  EXPECT_EQ(testing::drain(conn.fd(), std::chrono::milliseconds(2000)).bytes.size(), proof_and_first);
}

}  // namespace
}  // namespace purlin::runtime
