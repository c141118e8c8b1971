// What travels on bootstrap connections (format version 2). Everything is a frame: a fixed
// header naming the frame's type and body length, then the body. A receiver knows which frame
// each step of the protocol allows and how long it may be, so it checks the header before it
// reads, let alone allocates, the body (check_header).
//
// Both kinds of connection open with a mutual challenge-response; the secret itself never
// travels. Each side proves it knows the connection's key with HMAC-SHA256 over both sides'
// nonces and the client's claims (auth.h): a process without the key can impersonate neither,
// a proof is worthless on any other connection, and claims cannot be altered in flight.
//
//   rank -> root:  kRootHello (the rank's nonce and claims), <- kChallenge (the root's nonce and
//                  proof, checked before the rank proves anything), kProof ->, then <- kRootReply;
//                  on kOk the reply is followed by kRootTable: per rank, its listen address and
//                  accept nonce. Key: the group secret.
//   rank -> rank:  kPeerHello, kProof, then kData frames, all sent at once; <- kProof. The
//                  acceptor's nonce is the accept nonce it gave the root, which the connector
//                  learned from the authenticated table, so the connector can prove itself
//                  without a round trip: a first message never waits for its receiver to be
//                  inside a bootstrap call (the kernel buffers it, as any message). The connector
//                  sends nothing more until the acceptor's proof has arrived and checked out.
//                  Key: the mesh key, derived from the secret and a nonce the root hands only to
//                  the ranks that joined, so the id alone admits no one to the ranks' connections.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/bootstrap/socket.h"

namespace purlin::runtime::wire {

// The first field of every frame: which kind of connection it belongs to and the format
// version, so that stray traffic and a peer of another version fail at the first header.
inline constexpr uint32_t kRootMagic = 0x3252'4c50;  // "PLR2"
inline constexpr uint32_t kPeerMagic = 0x3250'4c50;  // "PLP2"

// A sanity bound on nranks so a corrupt hello cannot make the root allocate without limit.
inline constexpr int32_t kMaxRanks = 1 << 20;

// Bootstrap messages carry setup data (peer records, handles, ids), kilobytes per rank; a claim
// beyond this is a broken or hostile peer. Bodies are allocated as their bytes arrive, never
// by the claim, so even a claim under the bound cannot make a rank allocate what was not sent.
inline constexpr uint64_t kMaxMessageBytes = uint64_t{256} << 20;

enum class FrameType : uint16_t {
  kRootHello = 1,
  kChallenge = 2,
  kProof = 3,
  kRootReply = 4,
  kRootTable = 5,
  kPeerHello = 6,
  kData = 7,
};

// kData frames: user messages, the collectives built on them, the notice a rank sends when it
// abandons a collective, and the farewell a rank sends when it leaves the group (teardown: it
// reads no peer's memory any more, and its connections end after it), live in separate tag
// spaces, so that none can be taken for another. A farewell has an empty body and tag 0.
enum class Channel : uint16_t { kUser = 0, kCollective = 1, kAbandoned = 2, kFarewell = 3 };

struct FrameHeader {
  uint32_t magic;
  uint16_t type;     // FrameType
  uint16_t channel;  // kData: Channel; otherwise 0
  int32_t tag;       // kData: the message's tag; otherwise 0
  uint32_t reserved; // 0
  uint64_t bytes;    // body length
};
static_assert(sizeof(FrameHeader) == 24);

struct Nonce {
  uint8_t bytes[32];
};
struct Mac {
  uint8_t bytes[32];
};

struct RootHello {
  Nonce nonce;
  int32_t rank;
  int32_t nranks;
  net::WireAddress listen;  // where this rank accepts its peers' connections
  Nonce accept_nonce;       // what its listener challenges connecting peers with
};
static_assert(sizeof(RootHello) == 96);

// One rank's entry of the table the root sends to every rank once the group has formed.
struct TableEntry {
  net::WireAddress listen;
  Nonce accept_nonce;
};
static_assert(sizeof(TableEntry) == 56);

struct PeerHello {
  Nonce nonce;
  int32_t from;
  int32_t to;  // guards against a stale address table pointing at another rank's listener
};
static_assert(sizeof(PeerHello) == 40);

// The root's answer to a hello.
struct Challenge {
  Nonce nonce;  // the root's
  Mac mac;      // the root's proof
};
static_assert(sizeof(Challenge) == 64);

struct Proof {
  Mac mac;
};
static_assert(sizeof(Proof) == 32);

enum class RootStatus : int32_t {
  kOk = 0,
  kNranksMismatch = 1,  // nranks differs from the group's (fixed by the first rank to join)
  kBadRank = 2,         // rank or nranks out of range, or an unusable address
  kDuplicateRank = 3,   // another connection already joined with this rank
};

struct RootReply {
  int32_t status;  // RootStatus
  int32_t nranks;
  Nonce group;     // kOk: the nonce the mesh key is derived from
};
static_assert(sizeof(RootReply) == 40);

struct AbandonedNotice {
  int32_t culprit;  // the rank whose failure made the sender give up, or the sender itself
};
static_assert(sizeof(AbandonedNotice) == 4);

// What a step of the protocol accepts: one frame type on one kind of connection, with a body
// length in [min_bytes, max_bytes].
struct Expect {
  uint32_t magic;
  FrameType type;
  uint64_t min_bytes;
  uint64_t max_bytes;
};

// The fixed-size handshake steps and data frames.
Expect expect_exactly(uint32_t magic, FrameType type, uint64_t bytes);
Expect expect_data();

// "" when `h` is what `e` allows (for kData also a known channel, and a notice of the right
// size), else what is wrong, for the WARN that ends the connection.
std::string check_header(const FrameHeader& h, const Expect& e);

// Range checks of a hello's claims (a proof tells who made them, not that they make sense).
// "" when usable, else why not.
std::string check_root_hello(const RootHello& h);
std::string check_peer_hello(const PeerHello& h, int self, int nranks);

FrameHeader make_header(uint32_t magic, FrameType type, uint64_t bytes);

}  // namespace purlin::runtime::wire
