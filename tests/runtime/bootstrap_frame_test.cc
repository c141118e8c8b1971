// Frames whose length is not what the protocol expects at that step: the frame reader must
// refuse them from the header alone, before allocating; the root and a rank's listener must
// close that one connection, say who sent what, and carry on with the group.
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/log.h"
#include "bootstrap_test_util.h"
#include "bootstrap_wire_util.h"
#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/unique_id.h"

namespace purlin::runtime {
namespace {

using testing::closed_by_peer;
using testing::dial;
using wire::FrameReader;

// Lengths around `expected` and far beyond anything a bootstrap frame may claim.
std::vector<uint64_t> bad_lengths(uint64_t expected) {
  return {0, expected - 1, expected + 1, uint64_t{1} << 32, uint64_t{1} << 63};
}

FrameReader::Status feed_all(FrameReader& r, const std::vector<uint8_t>& bytes) {
  size_t used = 0;
  return r.feed(bytes.data(), bytes.size(), &used);
}

std::vector<uint8_t> frame_bytes(const wire::FrameHeader& h, size_t body_bytes) {
  std::vector<uint8_t> out(sizeof(h) + body_bytes, 0x11);
  std::memcpy(out.data(), &h, sizeof(h));
  return out;
}

TEST(FrameReader, RefusesEveryMisSizedHandshakeFrameFromItsHeader) {
  const struct {
    uint32_t magic;
    wire::FrameType type;
    uint64_t size;
  } steps[] = {{wire::kRootMagic, wire::FrameType::kRootHello, sizeof(wire::RootHello)},
               {wire::kRootMagic, wire::FrameType::kChallenge, sizeof(wire::Challenge)},
               {wire::kRootMagic, wire::FrameType::kProof, sizeof(wire::Proof)},
               {wire::kRootMagic, wire::FrameType::kRootReply, sizeof(wire::RootReply)},
               {wire::kRootMagic, wire::FrameType::kRootTable, 3 * sizeof(wire::TableEntry)},
               {wire::kPeerMagic, wire::FrameType::kPeerHello, sizeof(wire::PeerHello)},
               {wire::kPeerMagic, wire::FrameType::kProof, sizeof(wire::Proof)}};
  for (const auto& step : steps) {
    const wire::Expect e = wire::expect_exactly(step.magic, step.type, step.size);
    for (uint64_t len : bad_lengths(step.size)) {
      FrameReader r;
      r.expect(e);
      // Only the header: the verdict may not wait for (or read) any body byte.
      EXPECT_EQ(feed_all(r, frame_bytes(wire::make_header(step.magic, step.type, len), 0)), FrameReader::Status::kBad)
          << "type " << static_cast<int>(step.type) << ", " << len << " bytes";
      EXPECT_NE(r.error().find(std::to_string(len) + " bytes, " + std::to_string(step.size) + " expected"),
                std::string::npos)
          << r.error();
      EXPECT_EQ(r.body().capacity(), 0u);
    }
    FrameReader ok;
    ok.expect(e);
    EXPECT_EQ(feed_all(ok, frame_bytes(wire::make_header(step.magic, step.type, step.size), step.size)),
              FrameReader::Status::kFrame);
  }
}

TEST(FrameReader, RefusesForeignHeaders) {
  const wire::Expect hello = wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootHello, 96);
  std::vector<wire::FrameHeader> bad(4, wire::make_header(wire::kRootMagic, wire::FrameType::kRootHello, 96));
  bad[0].magic = 0x3152'4c50;  // "PLR1": the previous version
  bad[1].type = static_cast<uint16_t>(wire::FrameType::kProof);
  bad[2].reserved = 1;
  bad[3].tag = 5;
  for (const wire::FrameHeader& h : bad) {
    FrameReader r;
    r.expect(hello);
    EXPECT_EQ(feed_all(r, frame_bytes(h, 96)), FrameReader::Status::kBad);
  }
  wire::FrameHeader data = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, 8);
  data.channel = 7;  // no such channel
  FrameReader r;
  r.expect(wire::expect_data());
  EXPECT_EQ(feed_all(r, frame_bytes(data, 8)), FrameReader::Status::kBad);
}

// A farewell is a state change, nothing more: an empty body and tag 0, or the connection ends.
TEST(FrameReader, FarewellsAreEmptyWithTagZero) {
  auto farewell = [](uint64_t bytes, int32_t tag) {
    wire::FrameHeader h = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, bytes);
    h.channel = static_cast<uint16_t>(wire::Channel::kFarewell);
    h.tag = tag;
    FrameReader r;
    r.expect(wire::expect_data());
    return feed_all(r, frame_bytes(h, bytes));
  };
  EXPECT_EQ(farewell(0, 0), FrameReader::Status::kFrame);
  EXPECT_EQ(farewell(4, 0), FrameReader::Status::kBad);
  EXPECT_EQ(farewell(0, 3), FrameReader::Status::kBad);
}

// A data frame may claim up to the cap, but its body grows only with the bytes that arrive.
TEST(FrameReader, DataFramesAreCappedAndAllocatedAsTheyArrive) {
  for (uint64_t len : {wire::kMaxMessageBytes + 1, uint64_t{1} << 32, uint64_t{1} << 63}) {
    FrameReader r;
    r.expect(wire::expect_data());
    EXPECT_EQ(feed_all(r, frame_bytes(wire::make_header(wire::kPeerMagic, wire::FrameType::kData, len), 0)),
              FrameReader::Status::kBad);
  }
  FrameReader r;
  r.expect(wire::expect_data());
  const auto claim = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, 200u << 20);
  EXPECT_EQ(feed_all(r, frame_bytes(claim, 1000)), FrameReader::Status::kMore);
  EXPECT_LE(r.body().capacity(), size_t{2} << 20) << "allocated for the claim, not for what arrived";
  // Byte by byte still assembles a frame.
  FrameReader slow;
  slow.expect(wire::expect_data());
  const auto bytes = frame_bytes(wire::make_header(wire::kPeerMagic, wire::FrameType::kData, 5), 5);
  FrameReader::Status st = FrameReader::Status::kMore;
  for (size_t i = 0; i < bytes.size(); ++i) {
    size_t used = 0;
    st = slow.feed(&bytes[i], 1, &used);
  }
  EXPECT_EQ(st, FrameReader::Status::kFrame);
  EXPECT_EQ(slow.body().size(), 5u);
}

class BootstrapFrames : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }
  // Closing must come from the length check, not from the handshake deadline.
  testing::ScopedEnv hello_timeout_{"PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS", "30000"};
};

std::string local_name(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  net::Address a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
      !net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), &a)) {
    return "?";
  }
  return a.str();
}

// Sends a header claiming `len` bytes, and a little of the body, on `fd`.
void send_claim(int fd, uint32_t magic, wire::FrameType type, uint64_t len) {
  const std::vector<uint8_t> bytes = frame_bytes(wire::make_header(magic, type, len), len < 64 ? len : 64);
  ASSERT_TRUE(testing::send_bytes(fd, bytes.data(), bytes.size()));
}

TEST_F(BootstrapFrames, RootClosesOnlyTheConnectionThatSentAMisSizedFrame) {
  char log_path[] = "/tmp/purlin_frames_XXXXXX";
  const int log_fd = ::mkstemp(log_path);
  ASSERT_GE(log_fd, 0);
  ::setenv("PURLIN_DEBUG_FILE", log_path, 1);
  log::reset();
  ncclUniqueId id;
  UniqueIdContents c;
  ASSERT_TRUE(testing::new_group(&id, &c));
  std::vector<std::string> senders;
  const auto deadline = std::chrono::milliseconds(2000);
  for (uint64_t len : bad_lengths(sizeof(wire::RootHello))) {  // the hello step
    net::Socket s = dial(c.root);
    ASSERT_TRUE(s.valid());
    senders.push_back(local_name(s.fd()));
    send_claim(s.fd(), wire::kRootMagic, wire::FrameType::kRootHello, len);
    EXPECT_TRUE(closed_by_peer(s.fd(), deadline)) << len << "-byte hello";
  }
  for (uint64_t len : bad_lengths(sizeof(wire::Proof))) {  // the proof step, after a good hello
    net::Socket s = dial(c.root);
    ASSERT_TRUE(s.valid());
    const wire::RootHello hello{{}, 0, 4, c.root.to_wire(), {}};
    ASSERT_TRUE(testing::send_frame(s.fd(), wire::kRootMagic, wire::FrameType::kRootHello, &hello, sizeof(hello)));
    wire::FrameReader r;
    ASSERT_EQ(wire::recv_frame(s.fd(), r,
                               wire::expect_exactly(wire::kRootMagic, wire::FrameType::kChallenge, 64),
                               net::deadline_after(5), nullptr, "root", "test"),
              ncclSuccess);
    send_claim(s.fd(), wire::kRootMagic, wire::FrameType::kProof, len);
    EXPECT_TRUE(closed_by_peer(s.fd(), deadline)) << len << "-byte proof";
  }
  EXPECT_EQ(testing::run_ranks_in_threads(4, [&](int r) { return testing::join_and_exercise(id, r, 4); }), "");
  ::unsetenv("PURLIN_DEBUG_FILE");
  log::reset();
  std::stringstream text;
  text << std::ifstream(log_path).rdbuf();
  ::unlink(log_path);
  ::close(log_fd);
  // The WARN names the sender and what was wrong (the first few; the rest are rate-limited).
  EXPECT_NE(text.str().find("closed a connection from " + senders[0] + ": a root hello frame of 0 bytes, 96 expected"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find(senders[2] + ": a root hello frame of 97 bytes, 96 expected"), std::string::npos);
}

TEST_F(BootstrapFrames, RankListenerClosesOnlyTheConnectionThatSentAMisSizedFrame) {
  std::vector<net::Address> addrs;
  std::vector<wire::Nonce> nonces;
  const auth::Key key = testing::test_key(6);
  auto m = testing::make_meshes(3, key, &addrs, 10, &nonces);
  ASSERT_EQ(m.size(), 3u);
  int got = 0;
  ncclResult_t received = ncclInternalError;
  std::thread rank1([&] { received = m[1]->recv(0, wire::Channel::kUser, 5, &got, sizeof(got)); });
  const auto deadline = std::chrono::milliseconds(2000);
  for (uint64_t len : bad_lengths(sizeof(wire::PeerHello))) {
    net::Socket s = dial(addrs[1]);
    ASSERT_TRUE(s.valid());
    send_claim(s.fd(), wire::kPeerMagic, wire::FrameType::kPeerHello, len);
    EXPECT_TRUE(closed_by_peer(s.fd(), deadline)) << len << "-byte hello";
  }
  for (uint64_t len : bad_lengths(sizeof(wire::Proof))) {
    net::Socket s = dial(addrs[1]);
    ASSERT_TRUE(s.valid());
    const wire::PeerHello hello{{}, 2, 1};
    ASSERT_TRUE(testing::send_frame(s.fd(), wire::kPeerMagic, wire::FrameType::kPeerHello, &hello, sizeof(hello)));
    send_claim(s.fd(), wire::kPeerMagic, wire::FrameType::kProof, len);
    EXPECT_TRUE(closed_by_peer(s.fd(), deadline)) << len << "-byte proof";
  }
  const int value = 77;
  ASSERT_EQ(m[0]->send(1, wire::Channel::kUser, 5, &value, sizeof(value)), ncclSuccess);
  rank1.join();
  EXPECT_EQ(received, ncclSuccess);
  EXPECT_EQ(got, 77);
  // Rank 2, whose rank the bad proofs claimed, is undisturbed.
  std::thread rank1_again([&] { received = m[1]->recv(2, wire::Channel::kUser, 6, &got, sizeof(got)); });
  ASSERT_EQ(m[2]->send(1, wire::Channel::kUser, 6, &value, sizeof(value)), ncclSuccess);
  rank1_again.join();
  EXPECT_EQ(received, ncclSuccess);
}

// After the handshake, a peer (here a process that knows the mesh key and claims rank 2) that
// sends an oversized data frame loses its connection, and only that one.
TEST_F(BootstrapFrames, OversizedDataFrameEndsThatPeersConnectionOnly) {
  for (uint64_t len : {uint64_t{1} << 32, uint64_t{1} << 63}) {
    std::vector<net::Address> addrs;
    std::vector<wire::Nonce> nonces;
    const auth::Key key = testing::test_key(7);
    auto m = testing::make_meshes(3, key, &addrs, 5, &nonces);
    ASSERT_EQ(m.size(), 3u);
    net::Socket s = dial(addrs[1]);
    ASSERT_TRUE(s.valid());
    const wire::PeerHello hello{{}, 2, 1};
    ASSERT_TRUE(testing::peer_handshake(s.fd(), hello, nonces[1], key));
    wire::FrameHeader h = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, len);
    h.tag = 3;
    ASSERT_TRUE(testing::send_bytes(s.fd(), &h, sizeof(h)));
    int x = 0;
    EXPECT_EQ(m[1]->recv(2, wire::Channel::kUser, 3, &x, sizeof(x)), ncclRemoteError);
    EXPECT_EQ(m[1]->blamed(), 2);
    EXPECT_TRUE(closed_by_peer(s.fd(), std::chrono::milliseconds(2000)));
    const int value = 9;
    std::thread rank1([&] { EXPECT_EQ(m[1]->recv(0, wire::Channel::kUser, 4, &x, sizeof(x)), ncclSuccess); });
    EXPECT_EQ(m[0]->send(1, wire::Channel::kUser, 4, &value, sizeof(value)), ncclSuccess);
    rank1.join();
    EXPECT_EQ(x, 9);
  }
}

}  // namespace
}  // namespace purlin::runtime
