// Point-to-point messages between the ranks of one group, after the rendezvous.
//
// Each ordered pair (a -> b) gets its own TCP connection, opened by `a` on its first send to `b`
// and kept: a connection carries one direction only, so neither side has to agree with the other
// on who connects. Messages are data frames (wire.h). A message that arrives while the rank
// waits for something else is buffered under (peer, channel, tag) in arrival order, never lost.
//
// Progress is made only inside send()/recv() (no helper thread), but a send blocked on a full
// socket keeps reading its incoming connections meanwhile: two ranks that send each other large
// messages before receiving would otherwise deadlock with both kernel buffers full.
//
// Every connection opens with the mutual challenge-response of wire.h under the mesh key, and
// the listener admits connections under the bounds of admission.h. An authenticated peer that
// breaks the protocol (a bad frame) loses its connection; strangers never affect the group.
//
// Collective tags are sequence numbers (see bootstrap.cc), which lets recv tell a peer that
// gave up a collective (it sent an abandon notice, or frames of a later collective) from a
// slow one, and report the rank to blame at once instead of a size mismatch or a timeout.
//
// A Mesh is used by one thread at a time; only abort() may be called from another thread, and
// not concurrently with destruction.
#pragma once

#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/bootstrap/admission.h"
#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {

class Mesh {
 public:
  struct PeerAddress {
    net::Address addr;         // where the rank listens
    wire::Nonce accept_nonce;  // what its listener challenges connecting peers with
  };

  // `peers[r]` describes rank r; `listener` is this rank's (peers[rank].addr); `key` is the
  // mesh key (auth::mesh_key).
  static ncclResult_t create(int rank, std::vector<PeerAddress> peers, const auth::Key& key, net::Socket listener,
                             int timeout_s, std::unique_ptr<Mesh>* out);
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(peers_.size()); }

  // The first message to a peer goes out with the handshake and returns without waiting for
  // the peer; later ones wait until the peer has proven itself (see wire.h).
  ncclResult_t send(int peer, wire::Channel channel, int tag, const void* data, size_t bytes);
  // The next message from `peer` on (channel, tag) must be exactly `bytes` long; a message of
  // another size is consumed and reported as ncclInvalidUsage.
  ncclResult_t recv(int peer, wire::Channel channel, int tag, void* data, size_t bytes);
  // Tells `dependents` that this rank gave up collective `tag` because of `culprit`, so that
  // they fail at once naming it instead of waiting out the timeout. Best effort, bounded by a
  // second in all.
  void notify_abandoned(int tag, int culprit, const std::vector<int>& dependents);
  // The rank blamed for the latest remote failure: a peer that went away, timed out or broke
  // the protocol, or the rank a peer's abandon notice named; -1 if none.
  int blamed() const { return blamed_; }
  void forget_blame() { blamed_ = -1; }
  // Leaving the group (teardown). farewell() tells every peer that this rank is done with it:
  // nothing of this rank reads their memory any more, and its connections end after it. Best
  // effort, bounded by `deadline`.
  void farewell(net::Deadline deadline);
  // Takes in what the peers have sent, without waiting, and returns the first rank whose
  // connection to this one ended without its farewell (its process died, or it broke the
  // protocol), or -1. Sees only peers that have connected to this rank (Bootstrap::connect_all).
  int lost_peer();
  // Waits until every peer has said farewell or its connection to this rank has ended (a
  // process that died reads nothing either). ncclRemoteError at the deadline, with a WARN
  // naming the peers still missing, or when aborted.
  ncclResult_t await_farewells(net::Deadline deadline);
  // Whether every peer has said farewell or ended, after taking in what has arrived. Does not wait.
  bool all_departed();
  // "rank 3 (10.0.0.7:41234)", for logs.
  std::string describe(int peer) const;
  void abort();

 private:
  // Our connection to a peer: kUnconfirmed from the first send until the peer's proof has
  // checked out, meanwhile holding the first message in case the connection must be redone.
  struct Outbound {
    enum class State { kNone, kUnconfirmed, kConfirmed, kBroken };
    net::Socket sock;
    State state = State::kNone;
    wire::PeerHello hello{};
    std::vector<uint8_t> first;
  };
  // An accepted connection: a handshake until its proof checks out, then a peer's frames.
  struct Inbound {
    enum class Stage { kHello, kProof, kFrames };
    net::Socket sock;
    net::Address from;
    net::Clock::time_point since;
    int peer = -1;
    Stage stage = Stage::kHello;
    wire::FrameReader reader;
    wire::PeerHello hello{};

    int progress() const { return stage == Stage::kProof ? 2 : (reader.received() > 0 ? 1 : 0); }
  };
  using Key = std::tuple<int, uint32_t, int>;  // peer, channel, tag

  enum class Wait { kReady, kTimeout, kAborted, kError };

  Mesh(int rank, std::vector<PeerAddress> peers, const auth::Key& key, net::Socket listener, int timeout_s);

  ncclResult_t send_until(int peer, wire::Channel channel, int tag, const void* data, size_t bytes,
                          net::Deadline deadline);
  // Connects to `peer` and sends the hello, the proof and the retained first message.
  ncclResult_t open(int peer, net::Deadline deadline);
  // Waits for the peer's proof on our connection to it; redoes the connection if the peer's
  // listener dropped it unanswered (it was full).
  ncclResult_t await_acceptance(int peer, net::Deadline deadline);
  // Writes all of `data` to `peer`'s connection, reading incoming frames while it cannot write.
  ncclResult_t write_progressing(int peer, const void* data, size_t bytes, net::Deadline deadline, int tag);
  // Why the peer cannot deliver (peer, kCollective, tag) any more, or ncclSuccess if it still may.
  ncclResult_t check_abandoned(int peer, int tag);
  // One poll over the listener, the incoming connections and (if >= 0) `io_fd` for `io_events`;
  // handles whatever is ready and closes expired handshakes. `*io_ready` tells whether io_fd is.
  Wait progress(int io_fd, short io_events, net::Deadline deadline, bool* io_ready);
  void accept_new();
  void expire_handshakes();
  // Reads everything available on `in`; closes it on EOF, error or a failed handshake.
  void pump(Inbound& in);
  void on_hello(Inbound& in);
  void on_proof(Inbound& in);
  void deliver(Inbound& in);
  void stranger_warn(const Inbound& in, const std::string& why);
  ncclResult_t wait_failure(Wait w, const char* op, int peer, int tag);
  ncclResult_t blame(int peer, ncclResult_t r);
  // " 2 5": the peers that have neither said farewell nor ended.
  std::string not_departed() const;

  const int rank_;
  const std::vector<PeerAddress> peers_;
  const auth::Key key_;
  const int timeout_s_;
  const net::AdmissionLimits limits_;
  const std::string name_;
  net::Acceptor acceptor_;
  net::AbortSignal abort_;
  net::WarnLimiter stranger_log_{std::chrono::seconds(1), 8};
  int blamed_ = -1;
  std::vector<Outbound> outbound_;       // [peer]
  std::vector<bool> peer_connected_;     // [peer]: its connection to us passed the handshake
  std::vector<bool> peer_closed_;        // [peer]: its connection to us has ended
  std::vector<bool> peer_farewell_;      // [peer]: it said farewell (its end of the connection is orderly)
  std::vector<Inbound> inbound_;
  std::map<Key, std::deque<std::vector<uint8_t>>> unexpected_;
};

}  // namespace purlin::runtime
