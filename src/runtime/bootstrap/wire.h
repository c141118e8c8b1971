// What travels on bootstrap connections. Each connection starts with a fixed-size hello that
// carries the group secret, so the receiver can authenticate it before allocating anything.
//
//   rank -> root:  RootHello; the root answers RootReply, followed on kOk by nranks WireAddress.
//   rank -> rank:  PeerHello once, then frames: FrameHeader followed by `bytes` payload bytes.
#pragma once

#include <cstdint>

#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"

namespace purlin::runtime::wire {

// Distinguishes the two kinds of connection, and both from stray traffic.
inline constexpr uint64_t kRootHelloMagic = 0x3174'6f6f'524e'4c50ULL;  // "PLNRoot1"
inline constexpr uint64_t kPeerHelloMagic = 0x3172'6565'504e'4c50ULL;  // "PLNPeer1"

// A sanity bound on nranks so a corrupt hello cannot make the root allocate without limit.
inline constexpr int32_t kMaxRanks = 1 << 20;

struct RootHello {
  uint64_t magic;
  Secret secret;
  int32_t rank;
  int32_t nranks;
  net::WireAddress listen;  // where this rank accepts its peers' connections
};
static_assert(sizeof(RootHello) == 56);

enum class RootStatus : int32_t {
  kOk = 0,
  kNranksMismatch = 1,  // nranks differs from the group's (fixed by the first rank to join)
  kBadRank = 2,         // rank or nranks out of range, or an unusable address
  kDuplicateRank = 3,   // another connection already joined with this rank
};

struct RootReply {
  int32_t status;
  int32_t nranks;
};

struct PeerHello {
  uint64_t magic;
  Secret secret;
  int32_t from;
  int32_t to;  // guards against a stale address table pointing at another rank's listener
};
static_assert(sizeof(PeerHello) == 32);

// User messages and the collectives built on them live in separate tag spaces, so a user tag
// can never be confused with an allgather step.
enum class Channel : uint32_t { kUser = 0, kCollective = 1 };

struct FrameHeader {
  int32_t tag;
  uint32_t channel;
  uint64_t bytes;
};
static_assert(sizeof(FrameHeader) == 16);

}  // namespace purlin::runtime::wire
