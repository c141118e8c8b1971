// Point-to-point messages between the ranks of one group, after the rendezvous.
//
// Each ordered pair (a -> b) gets its own TCP connection, opened by `a` on its first send to `b`
// and kept: a connection carries one direction only, so neither side has to agree with the other
// on who connects. Messages are framed {tag, channel, size}. A frame that arrives while the rank
// waits for something else is buffered under (peer, channel, tag) in arrival order, never lost.
//
// Progress is made only inside send()/recv() (no helper thread), but a send blocked on a full
// socket keeps reading its incoming connections meanwhile: two ranks that send each other large
// messages before receiving would otherwise deadlock with both kernel buffers full.
//
// A Mesh is used by one thread at a time; only abort() may be called from another thread, and
// not concurrently with destruction.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {

class Mesh {
 public:
  // `peers[r]` is rank r's listen address; `listener` is this rank's (peers[rank]).
  static ncclResult_t create(int rank, std::vector<net::Address> peers, const Secret& secret,
                             net::Socket listener, int timeout_s, std::unique_ptr<Mesh>* out);
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(peers_.size()); }

  ncclResult_t send(int peer, wire::Channel channel, int tag, const void* data, size_t bytes);
  // The next message from `peer` on (channel, tag) must be exactly `bytes` long; a message of
  // another size is consumed and reported as ncclInvalidUsage.
  ncclResult_t recv(int peer, wire::Channel channel, int tag, void* data, size_t bytes);
  void abort();

 private:
  // An accepted connection: unauthenticated until its PeerHello has been read and checked.
  struct Inbound {
    enum class Stage { kHello, kHeader, kPayload };
    net::Socket sock;
    net::Address from;
    int peer = -1;
    Stage stage = Stage::kHello;
    size_t got = 0;
    wire::PeerHello hello{};
    wire::FrameHeader header{};
    std::vector<uint8_t> payload;
  };
  using Key = std::tuple<int, uint32_t, int>;  // peer, channel, tag

  enum class Wait { kReady, kTimeout, kAborted, kError };

  Mesh(int rank, std::vector<net::Address> peers, const Secret& secret, net::Socket listener, int timeout_s);

  ncclResult_t connect_peer(int peer, net::Deadline deadline);
  // Writes all of `data` to `peer`'s connection, reading incoming frames while it cannot write.
  ncclResult_t write_progressing(int peer, const void* data, size_t bytes, net::Deadline deadline, int tag);
  // One poll over the listener, the incoming connections and (if >= 0) `out_fd` for writing;
  // handles whatever is readable. `*writable` tells whether out_fd can take more bytes.
  Wait progress(int out_fd, net::Deadline deadline, bool* writable);
  void accept_new();
  // Reads everything available on `in`; closes it on EOF, error or a failed handshake.
  void pump(Inbound& in);
  bool accept_hello(Inbound& in);
  void deliver(Inbound& in);
  ncclResult_t wait_failure(Wait w, const char* op, int peer, int tag);

  const int rank_;
  const std::vector<net::Address> peers_;
  const Secret secret_;
  net::Socket listener_;
  const int timeout_s_;
  net::AbortSignal abort_;
  std::vector<net::Socket> outbound_;    // [peer]: our connection to it, once opened
  std::vector<bool> outbound_broken_;    // [peer]: a frame was cut short; the stream is unusable
  std::vector<bool> peer_connected_;     // [peer]: its connection to us passed the handshake
  std::vector<bool> peer_closed_;        // [peer]: its connection to us has ended
  std::vector<Inbound> inbound_;
  std::map<Key, std::deque<std::vector<uint8_t>>> unexpected_;
};

}  // namespace purlin::runtime
