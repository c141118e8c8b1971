// Helpers for tests that speak the bootstrap protocol by hand (as strangers, impostors and
// fake servers do): raw frames, either side of the challenge-response, and small test groups
// of Mesh objects whose addresses and key the test knows.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime::testing {

// A new group: create_unique_id (its root starts) and the id's contents. False on failure.
bool new_group(ncclUniqueId* id, UniqueIdContents* contents);

// A connection to `to` (5 s to connect), or an invalid socket.
net::Socket dial(const net::Address& to);

// Writes bytes / a header and body; false on failure.
bool send_bytes(int fd, const void* data, size_t len);
bool send_frame(int fd, uint32_t magic, wire::FrameType type, const void* body, size_t len);

// What `fd` receives within `limit`, and whether the other side closed it (EOF or reset).
struct Drained {
  std::vector<uint8_t> bytes;
  bool closed = false;
};
Drained drain(int fd, std::chrono::milliseconds limit);

// True once the other side has closed `fd` within `limit`; data before the EOF is skipped.
inline bool closed_by_peer(int fd, std::chrono::milliseconds limit) { return drain(fd, limit).closed; }

// Accepts one connection on `listen_fd` (5 s at most) and reads a first frame satisfying `e`
// into `reader`: a fake server's view of a rank. An invalid socket if either fails.
net::Socket accept_first_frame(int listen_fd, const wire::Expect& e, wire::FrameReader* reader);

// Sets an environment variable for the life of the object, then unsets it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// A rank's side of the root handshake, up to and including its proof, made with `key` (which
// may be wrong). `*root_proved` tells whether the root's challenge verified under `key`. False
// when the exchange itself failed (the root closed the connection, or sent something else).
bool root_handshake(int fd, const wire::RootHello& hello, const auth::Key& key, bool* root_proved);

// A connecting peer's hello and proof (made with `key`, which may be wrong), sent at once.
bool peer_handshake(int fd, const wire::PeerHello& hello, const wire::Nonce& accept_nonce, const auth::Key& key);
// Whether the acceptor's proof arrives and verifies under `key`.
bool peer_accepted(int fd, const wire::PeerHello& hello, const wire::Nonce& accept_nonce, const auth::Key& key);

// `n` meshes on loopback sharing `key`, with `n` listeners made first; `addrs` receives their
// addresses and `accept_nonces` (if given) their accept nonces.
std::vector<std::unique_ptr<Mesh>> make_meshes(int n, const auth::Key& key, std::vector<net::Address>* addrs,
                                               int timeout_s = 10, std::vector<wire::Nonce>* accept_nonces = nullptr);

auth::Key test_key(uint8_t seed);

// A forked process holding `count` silent connections to `to`, so that strangers' descriptors
// do not count against the test's own limit. Connects as fast as it can; the constructor
// returns once the first `head_start` are open, so the rest arrive while the test goes on.
class StrangerFlood {
 public:
  StrangerFlood(const net::Address& to, int count, int head_start);
  ~StrangerFlood();
  StrangerFlood(const StrangerFlood&) = delete;
  StrangerFlood& operator=(const StrangerFlood&) = delete;
  // How many connections the child opened in all (waits for it to finish, at most `limit`);
  // -1 if it did not report.
  int opened(std::chrono::seconds limit);

 private:
  pid_t pid_ = -1;
  int report_fd_ = -1;
};

}  // namespace purlin::runtime::testing
