// The proofs of the bootstrap's mutual challenge-response (the exchange is described in wire.h).
//
// A proof is HMAC-SHA256 under the connection's key over a label naming the prover's role, the
// client's whole hello (its nonce and every claim: rank, nranks, address) and the server's nonce.
// Both nonces make each proof unique to one connection, so a recorded proof is worthless
// elsewhere; the role label keeps a server's proof from serving as a client's and vice versa;
// covering the claims means they cannot be changed without the key.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>

#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime::auth {

// Cryptographically random bytes (getrandom); ncclSystemError with a WARN if none can be had.
ncclResult_t random_bytes(void* out, size_t len);

enum class Role : uint8_t {
  kRoot = 1,        // the root, answering a rank's hello
  kRank = 2,        // a rank, answering the root's challenge
  kAcceptor = 3,    // a rank accepting a peer's connection
  kConnector = 4,   // a rank connecting to a peer
};

// An HMAC key: the group secret (root connections) or the mesh key (rank-to-rank connections).
struct Key {
  uint8_t bytes[32];
  size_t len;
};

Key root_key(const Secret& secret);

// The key of the ranks' own connections: HMAC(secret, label | group nonce). The root hands the
// group nonce only to the ranks that joined, so someone who has only the id cannot connect to
// a rank as one of its peers, nor feed it forged peer records.
Key mesh_key(const Secret& secret, const wire::Nonce& group);

wire::Mac prove(const Key& key, Role role, const void* hello, size_t hello_len, const wire::Nonce& server_nonce);

// Recomputes the proof and compares in constant time.
bool verify(const Key& key, Role role, const void* hello, size_t hello_len, const wire::Nonce& server_nonce,
            const wire::Mac& mac);

}  // namespace purlin::runtime::auth
