// The layout of a Purlin ncclUniqueId and the group secret it carries.
//
// bytes [0, 8)    magic "PURLIN" + layout version + 0
// bytes [8, 24)   secret: 16 random bytes; every connection of the group must prove it knows them
// bytes [24, 48)  the root's listen address (net::WireAddress)
// bytes [48, 128) zero
#pragma once

#include <nccl.h>

#include <cstdint>

#include "runtime/bootstrap/socket.h"

namespace purlin::runtime {

struct Secret {
  uint8_t bytes[16];
};
static_assert(sizeof(Secret) == 16);

struct UniqueIdContents {
  Secret secret;
  net::Address root;
};

// False when the magic or the address is not Purlin's.
bool decode_unique_id(const ncclUniqueId& id, UniqueIdContents* out);
void encode_unique_id(const UniqueIdContents& contents, ncclUniqueId* out);

}  // namespace purlin::runtime
