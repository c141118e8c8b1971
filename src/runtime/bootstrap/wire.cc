#include "runtime/bootstrap/wire.h"

#include <cstdio>

namespace purlin::runtime::wire {
namespace {

const char* type_name(uint16_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::kRootHello:
      return "root hello";
    case FrameType::kChallenge:
      return "challenge";
    case FrameType::kProof:
      return "proof";
    case FrameType::kRootReply:
      return "root reply";
    case FrameType::kRootTable:
      return "address table";
    case FrameType::kPeerHello:
      return "peer hello";
    case FrameType::kData:
      return "data";
  }
  return "unknown";
}

template <typename... Args>
std::string format(const char* fmt, Args... args) {
  char buf[192];
  std::snprintf(buf, sizeof(buf), fmt, args...);
  return buf;
}

}  // namespace

Expect expect_exactly(uint32_t magic, FrameType type, uint64_t bytes) { return {magic, type, bytes, bytes}; }

Expect expect_data() { return {kPeerMagic, FrameType::kData, 0, kMaxMessageBytes}; }

std::string check_header(const FrameHeader& h, const Expect& e) {
  if (h.magic != e.magic) {
    return format("not a Purlin bootstrap frame of this version and connection (magic 0x%08x, expected 0x%08x)",
                  h.magic, e.magic);
  }
  if (h.type != static_cast<uint16_t>(e.type)) {
    return format("a %s frame (type %u) where a %s frame belongs", type_name(h.type), h.type,
                  type_name(static_cast<uint16_t>(e.type)));
  }
  if (h.reserved != 0) return format("reserved header field is %u, not 0", h.reserved);
  if (e.type != FrameType::kData && (h.channel != 0 || h.tag != 0)) {
    return format("a %s frame with channel %u and tag %d, not 0", type_name(h.type), h.channel, h.tag);
  }
  if (h.bytes < e.min_bytes || h.bytes > e.max_bytes) {
    if (e.min_bytes == e.max_bytes) {
      return format("a %s frame of %llu bytes, %llu expected", type_name(h.type),
                    static_cast<unsigned long long>(h.bytes), static_cast<unsigned long long>(e.min_bytes));
    }
    return format("a %s frame of %llu bytes, at most %llu allowed", type_name(h.type),
                  static_cast<unsigned long long>(h.bytes), static_cast<unsigned long long>(e.max_bytes));
  }
  if (e.type == FrameType::kData) {
    if (h.channel > static_cast<uint16_t>(Channel::kFarewell)) return format("unknown data channel %u", h.channel);
    if (h.channel == static_cast<uint16_t>(Channel::kAbandoned) && h.bytes != sizeof(AbandonedNotice)) {
      return format("an abandon notice of %llu bytes, %zu expected", static_cast<unsigned long long>(h.bytes),
                    sizeof(AbandonedNotice));
    }
    if (h.channel == static_cast<uint16_t>(Channel::kFarewell) && (h.bytes != 0 || h.tag != 0)) {
      return format("a farewell of %llu bytes with tag %d, 0 and 0 expected", static_cast<unsigned long long>(h.bytes),
                    h.tag);
    }
  }
  return "";
}

std::string check_root_hello(const RootHello& h) {
  net::Address listen;
  if (h.nranks <= 0 || h.nranks > kMaxRanks) return format("nranks %d outside [1, %d]", h.nranks, kMaxRanks);
  if (h.rank < 0 || h.rank >= h.nranks) return format("rank %d outside [0, %d)", h.rank, h.nranks);
  if (!net::Address::from_wire(h.listen, &listen)) return format("unusable listen address (family %u)", h.listen.family);
  return "";
}

std::string check_peer_hello(const PeerHello& h, int self, int nranks) {
  if (h.to != self) return format("addressed to rank %d", h.to);
  if (h.from < 0 || h.from >= nranks || h.from == self) {
    return format("claims to be rank %d (group of %d, this is rank %d)", h.from, nranks, self);
  }
  return "";
}

FrameHeader make_header(uint32_t magic, FrameType type, uint64_t bytes) {
  return FrameHeader{magic, static_cast<uint16_t>(type), 0, 0, 0, bytes};
}

}  // namespace purlin::runtime::wire
