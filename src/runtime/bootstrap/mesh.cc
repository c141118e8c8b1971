#include "runtime/bootstrap/mesh.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "base/log.h"

namespace purlin::runtime {
namespace {

// Abandon notices go to peers that may be blocked on this rank; a peer that does not take one
// quickly is not waiting for it, and the failing rank must not stall on its way out.
constexpr std::chrono::seconds kNoticeBound{1};

// How often a connection closed unanswered is redone. Listeners drop unanswered connections only
// when strangers fill them, and read a peer's handshake the moment they accept it, so a real peer
// rarely needs more than one; a peer that keeps refusing (another connection holds this rank
// there) must not be hammered until the timeout.
constexpr int kMaxRedials = 20;

// Whether collective sequence number `a` comes after `b`, modulo wrap-around.
bool later(int a, int b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)) > 0; }

}  // namespace

ncclResult_t Mesh::create(int rank, std::vector<PeerAddress> peers, const auth::Key& key, net::Socket listener,
                          int timeout_s, std::unique_ptr<Mesh>* out) {
  std::unique_ptr<Mesh> mesh(new Mesh(rank, std::move(peers), key, std::move(listener), timeout_s));
  if (ncclResult_t r = mesh->abort_.open(); r != ncclSuccess) return r;
  *out = std::move(mesh);
  return ncclSuccess;
}

Mesh::Mesh(int rank, std::vector<PeerAddress> peers, const auth::Key& key, net::Socket listener, int timeout_s)
    : rank_(rank),
      peers_(std::move(peers)),
      key_(key),
      timeout_s_(timeout_s),
      limits_(net::admission_limits()),
      name_("bootstrap rank " + std::to_string(rank)),
      acceptor_(std::move(listener), name_),
      outbound_(peers_.size()),
      peer_connected_(peers_.size(), false),
      peer_closed_(peers_.size(), false),
      peer_farewell_(peers_.size(), false) {}

void Mesh::abort() { abort_.raise(); }

std::string Mesh::describe(int peer) const {
  return "rank " + std::to_string(peer) + " (" + peers_[peer].addr.str() + ")";
}

ncclResult_t Mesh::blame(int peer, ncclResult_t r) {
  if (r == ncclRemoteError && !abort_.raised()) blamed_ = peer;
  return r;
}

ncclResult_t Mesh::send(int peer, wire::Channel channel, int tag, const void* data, size_t bytes) {
  return send_until(peer, channel, tag, data, bytes, net::deadline_after(timeout_s_));
}

ncclResult_t Mesh::send_until(int peer, wire::Channel channel, int tag, const void* data, size_t bytes,
                              net::Deadline deadline) {
  if (abort_.raised()) return ncclRemoteError;
  if (peer < 0 || peer >= size() || (bytes > 0 && data == nullptr) || bytes > wire::kMaxMessageBytes) {
    PURLIN_WARN("%s: send to rank %d of %d with %zu bytes at %p: invalid argument (at most %llu bytes)",
                name_.c_str(), peer, size(), bytes, data, static_cast<unsigned long long>(wire::kMaxMessageBytes));
    return ncclInvalidArgument;
  }
  if (peer == rank_) {
    const auto* p = static_cast<const uint8_t*>(data);
    unexpected_[Key{peer, static_cast<uint32_t>(channel), tag}].emplace_back(p, p + bytes);
    return ncclSuccess;
  }
  Outbound& out = outbound_[peer];
  if (out.state == Outbound::State::kBroken) {
    PURLIN_WARN("%s: the connection to %s broke during an earlier send", name_.c_str(), describe(peer).c_str());
    return blame(peer, ncclRemoteError);
  }
  wire::FrameHeader header = wire::make_header(wire::kPeerMagic, wire::FrameType::kData, bytes);
  header.channel = static_cast<uint16_t>(channel);
  header.tag = tag;
  ncclResult_t r = ncclSuccess;
  if (out.state == Outbound::State::kNone) {
    const auto* p = static_cast<const uint8_t*>(data);
    out.first.assign(reinterpret_cast<const uint8_t*>(&header), reinterpret_cast<const uint8_t*>(&header + 1));
    if (bytes > 0) out.first.insert(out.first.end(), p, p + bytes);
    r = open(peer, deadline);
  } else {
    if (out.state == Outbound::State::kUnconfirmed) r = await_acceptance(peer, deadline);
    if (r == ncclSuccess) r = write_progressing(peer, &header, sizeof(header), deadline, tag);
    if (r == ncclSuccess && bytes > 0) r = write_progressing(peer, data, bytes, deadline, tag);
  }
  if (r != ncclSuccess) {
    // Part of a frame may be on the wire; anything sent after it would be misparsed.
    out.state = Outbound::State::kBroken;
    out.sock.close();
    out.first = {};
  }
  return r;
}

ncclResult_t Mesh::recv(int peer, wire::Channel channel, int tag, void* data, size_t bytes) {
  if (abort_.raised()) return ncclRemoteError;
  if (peer < 0 || peer >= size() || (bytes > 0 && data == nullptr)) {
    PURLIN_WARN("%s: recv from rank %d of %d with %zu bytes at %p: invalid argument", name_.c_str(), peer, size(),
                bytes, data);
    return ncclInvalidArgument;
  }
  const Key key{peer, static_cast<uint32_t>(channel), tag};
  const net::Deadline deadline = net::deadline_after(timeout_s_);
  for (;;) {
    if (auto it = unexpected_.find(key); it != unexpected_.end()) {
      std::vector<uint8_t> msg = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) unexpected_.erase(it);
      if (msg.size() != bytes) {
        PURLIN_WARN("%s: message from rank %d (channel %u, tag %d) has %zu bytes, %zu expected", name_.c_str(), peer,
                    static_cast<unsigned>(channel), tag, msg.size(), bytes);
        return ncclInvalidUsage;
      }
      if (bytes > 0) std::memcpy(data, msg.data(), bytes);
      return ncclSuccess;
    }
    if (peer == rank_) {
      PURLIN_WARN("%s: recv from itself (tag %d) without a matching earlier send", name_.c_str(), tag);
      return ncclInvalidUsage;
    }
    if (channel == wire::Channel::kCollective) {
      if (ncclResult_t r = check_abandoned(peer, tag); r != ncclSuccess) return r;
    }
    if (peer_closed_[peer]) {
      PURLIN_WARN("%s: the connection from %s has ended; no message with tag %d will come", name_.c_str(),
                  describe(peer).c_str(), tag);
      return blame(peer, ncclRemoteError);
    }
    if (Wait w = progress(-1, 0, deadline, nullptr); w != Wait::kReady) return wait_failure(w, "recv from", peer, tag);
  }
}

ncclResult_t Mesh::check_abandoned(int peer, int tag) {
  const auto notice = unexpected_.find(Key{peer, static_cast<uint32_t>(wire::Channel::kAbandoned), tag});
  if (notice != unexpected_.end()) {
    wire::AbandonedNotice n{};
    std::memcpy(&n, notice->second.front().data(), sizeof(n));
    const int culprit = n.culprit >= 0 && n.culprit < size() ? n.culprit : peer;
    PURLIN_WARN("%s: %s gave up collective #%d because %s failed", name_.c_str(), describe(peer).c_str(), tag,
                describe(culprit).c_str());
    return blame(culprit, ncclRemoteError);
  }
  // Frames of one connection arrive in order, so a later collective's frame means the peer has
  // left this one and will not send what it still owes.
  const uint32_t coll = static_cast<uint32_t>(wire::Channel::kCollective);
  for (auto it = unexpected_.lower_bound(Key{peer, coll, INT_MIN});
       it != unexpected_.end() && std::get<0>(it->first) == peer && std::get<1>(it->first) == coll; ++it) {
    if (later(std::get<2>(it->first), tag)) {
      PURLIN_WARN("%s: %s moved on to collective #%d while this rank waits for its part of #%d: it gave up #%d",
                  name_.c_str(), describe(peer).c_str(), std::get<2>(it->first), tag, tag);
      return blame(peer, ncclRemoteError);
    }
  }
  return ncclSuccess;
}

void Mesh::notify_abandoned(int tag, int culprit, const std::vector<int>& dependents) {
  if (abort_.raised()) return;
  const int keep = blamed_;  // failures here say nothing about the collective that failed
  const net::Deadline deadline = net::Clock::now() + kNoticeBound;
  const wire::AbandonedNotice n{culprit};
  for (int d : dependents) {
    if (d == rank_ || d == culprit || d < 0 || d >= size() || peer_closed_[d] ||
        outbound_[d].state == Outbound::State::kBroken) {
      continue;
    }
    if (net::Clock::now() >= deadline) break;
    send_until(d, wire::Channel::kAbandoned, tag, &n, sizeof(n), deadline);
  }
  blamed_ = keep;
}

void Mesh::farewell(net::Deadline deadline) {
  const int keep = blamed_;  // a peer gone by now is no failure of any collective
  for (int p = 0; p < size(); ++p) {
    if (p == rank_ || peer_closed_[p] || outbound_[p].state == Outbound::State::kBroken) continue;
    if (net::Clock::now() >= deadline) break;
    if (send_until(p, wire::Channel::kFarewell, 0, nullptr, 0, deadline) != ncclSuccess) {
      PURLIN_TRACE(kBootstrap, "%s: no farewell to %s", name_.c_str(), describe(p).c_str());
    }
  }
  blamed_ = keep;
}

int Mesh::lost_peer() {
  if (abort_.raised()) return -1;
  (void)progress(-1, 0, net::Clock::now(), nullptr);
  for (int p = 0; p < size(); ++p) {
    if (peer_closed_[p] && !peer_farewell_[p]) return p;
  }
  return -1;
}

std::string Mesh::not_departed() const {
  std::string missing;
  for (int p = 0; p < size(); ++p) {
    if (p != rank_ && !peer_farewell_[p] && !peer_closed_[p]) missing.append(" ").append(std::to_string(p));
  }
  return missing;
}

bool Mesh::all_departed() {
  if (not_departed().empty()) return true;
  if (abort_.raised()) return false;
  (void)progress(-1, 0, net::Clock::now(), nullptr);
  return not_departed().empty();
}

ncclResult_t Mesh::await_farewells(net::Deadline deadline) {
  for (;;) {
    const std::string missing = not_departed();
    if (missing.empty()) return ncclSuccess;
    const Wait w = progress(-1, 0, deadline, nullptr);
    if (w == Wait::kAborted) return ncclRemoteError;
    if (w == Wait::kError) return ncclSystemError;
    if (w == Wait::kTimeout) {
      PURLIN_WARN("%s: no farewell from rank(s)%s, whose connections are still open", name_.c_str(),
                  missing.c_str());
      return ncclRemoteError;
    }
  }
}

ncclResult_t Mesh::open(int peer, net::Deadline deadline) {
  Outbound& out = outbound_[peer];
  if (ncclResult_t r = net::connect_to(peers_[peer].addr, deadline, &abort_, net::Refused::kIsFinal, &out.sock);
      r != ncclSuccess) {
    PURLIN_WARN("%s: cannot connect to %s", name_.c_str(), describe(peer).c_str());
    return blame(peer, r);
  }
  // A fresh nonce per connection: a proof of an earlier connection is worth nothing on this one.
  out.hello = wire::PeerHello{{}, rank_, peer};
  if (ncclResult_t r = auth::random_bytes(&out.hello.nonce, sizeof(out.hello.nonce)); r != ncclSuccess) return r;
  const wire::Proof proof{
      auth::prove(key_, auth::Role::kConnector, &out.hello, sizeof(out.hello), peers_[peer].accept_nonce)};
  const auto hello_header = wire::make_header(wire::kPeerMagic, wire::FrameType::kPeerHello, sizeof(out.hello));
  const auto proof_header = wire::make_header(wire::kPeerMagic, wire::FrameType::kProof, sizeof(proof));
  uint8_t msg[2 * sizeof(wire::FrameHeader) + sizeof(wire::PeerHello) + sizeof(wire::Proof)];
  uint8_t* at = msg;
  for (auto [part, len] : {std::pair<const void*, size_t>{&hello_header, sizeof(hello_header)},
                           {&out.hello, sizeof(out.hello)},
                           {&proof_header, sizeof(proof_header)},
                           {&proof, sizeof(proof)}}) {
    std::memcpy(at, part, len);
    at += len;
  }
  ncclResult_t r = write_progressing(peer, msg, sizeof(msg), deadline, -1);
  if (r == ncclSuccess) r = write_progressing(peer, out.first.data(), out.first.size(), deadline, -1);
  if (r == ncclSuccess) out.state = Outbound::State::kUnconfirmed;
  return r;
}

ncclResult_t Mesh::await_acceptance(int peer, net::Deadline deadline) {
  Outbound& out = outbound_[peer];
  wire::FrameReader reader;
  for (int redials = 0, backoff_ms = 1;; ++redials, backoff_ms = std::min(backoff_ms * 2, 100)) {
    reader.expect(wire::expect_exactly(wire::kPeerMagic, wire::FrameType::kProof, sizeof(wire::Proof)));
    wire::FrameReader::Status st;
    while ((st = reader.read_from(out.sock.fd())) == wire::FrameReader::Status::kMore) {
      for (bool ready = false; !ready;) {
        if (Wait w = progress(out.sock.fd(), POLLIN, deadline, &ready); w != Wait::kReady) {
          return wait_failure(w, "handshake with", peer, -1);
        }
      }
    }
    if (st == wire::FrameReader::Status::kFrame) {
      const auto proof = reader.body_as<wire::Proof>();
      if (!auth::verify(key_, auth::Role::kAcceptor, &out.hello, sizeof(out.hello), peers_[peer].accept_nonce,
                        proof.mac)) {
        PURLIN_WARN("%s: the process at %s failed to prove it is rank %d of this group (wrong mesh key)",
                    name_.c_str(), peers_[peer].addr.str().c_str(), peer);
        return blame(peer, ncclRemoteError);
      }
      out.state = Outbound::State::kConfirmed;
      out.first = {};
      return ncclSuccess;
    }
    if (st != wire::FrameReader::Status::kClosed || reader.received() != 0) {
      PURLIN_WARN("%s: handshake with %s failed: %s", name_.c_str(), describe(peer).c_str(),
                  st == wire::FrameReader::Status::kBad     ? reader.error().c_str()
                  : st == wire::FrameReader::Status::kClosed ? "connection closed mid-proof"
                                                            : std::strerror(errno));
      return blame(peer, ncclRemoteError);
    }
    // Closed unanswered: the peer's listener was full and dropped the connection before reading
    // it. Redo it, first message included, while serving incoming handshakes meanwhile.
    const net::Deadline pause = std::min(deadline, net::Clock::now() + std::chrono::milliseconds(backoff_ms));
    const Wait w = progress(-1, 0, pause, nullptr);
    if (w == Wait::kAborted || w == Wait::kError || pause == deadline || redials == kMaxRedials) {
      PURLIN_WARN("%s: %s closed the connection without answering, %d times", name_.c_str(), describe(peer).c_str(),
                  redials + 1);
      return blame(peer, w == Wait::kError ? ncclSystemError : ncclRemoteError);
    }
    PURLIN_TRACE(kBootstrap, "%s: %s closed the connection unanswered; connecting again", name_.c_str(),
                 describe(peer).c_str());
    if (ncclResult_t r = open(peer, deadline); r != ncclSuccess) return r;
  }
}

ncclResult_t Mesh::write_progressing(int peer, const void* data, size_t bytes, net::Deadline deadline, int tag) {
  const int fd = outbound_[peer].sock.fd();
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < bytes) {
    size_t n = 0;
    net::Io io = net::write_some(fd, p + done, bytes - done, &n);
    if (io == net::Io::kProgress) {
      done += n;
      continue;
    }
    if (io != net::Io::kWouldBlock) {
      PURLIN_WARN("%s: send to %s (tag %d) failed: %s", name_.c_str(), describe(peer).c_str(), tag,
                  std::strerror(errno));
      return blame(peer, ncclRemoteError);
    }
    for (bool writable = false; !writable;) {
      if (Wait w = progress(fd, POLLOUT, deadline, &writable); w != Wait::kReady) {
        return wait_failure(w, "send to", peer, tag);
      }
    }
  }
  return ncclSuccess;
}

Mesh::Wait Mesh::progress(int io_fd, short io_events, net::Deadline deadline, bool* io_ready) {
  std::vector<pollfd> fds;
  fds.reserve(3 + inbound_.size());
  fds.push_back({abort_.fd(), POLLIN, 0});
  fds.push_back({acceptor_.poll_fd(), POLLIN, 0});
  fds.push_back({io_fd, io_events, 0});  // -1: nothing to wait for, ignored by poll
  net::Clock::time_point wake = std::min(deadline, acceptor_.resume_at());
  for (const Inbound& in : inbound_) {
    fds.push_back({in.sock.fd(), POLLIN, 0});
    if (in.stage != Inbound::Stage::kFrames) wake = std::min(wake, in.since + limits_.hello_timeout);
  }
  const int rc = net::poll_until(fds.data(), fds.size(), wake);
  if (abort_.raised()) return Wait::kAborted;
  if (rc < 0) {
    PURLIN_WARN("%s: poll failed: %s", name_.c_str(), std::strerror(errno));
    return Wait::kError;
  }
  const size_t count = inbound_.size();
  for (size_t i = 0; i < count; ++i) {
    if (fds[3 + i].revents != 0) pump(inbound_[i]);
  }
  expire_handshakes();
  std::erase_if(inbound_, [](const Inbound& in) { return !in.sock.valid(); });
  if (fds[1].revents != 0) accept_new();
  // POLLERR / POLLHUP count as ready: the next read or write then reports the actual error.
  if (io_ready != nullptr) *io_ready = fds[2].revents != 0;
  if (fds[2].revents == 0 && net::Clock::now() >= deadline) return Wait::kTimeout;
  return Wait::kReady;
}

void Mesh::stranger_warn(const Inbound& in, const std::string& why) {
  std::string note;
  if (!stranger_log_.allow(&note)) return;
  PURLIN_WARN("%s: closed a connection from %s: %s%s", name_.c_str(), in.from.str().c_str(), why.c_str(),
              note.c_str());
}

void Mesh::accept_new() {
  net::Socket s;
  net::Address from;
  while (acceptor_.accept(&s, &from)) {
    Inbound& in = net::admit(
        inbound_, std::move(s), from, limits_, [](const Inbound& c) { return c.stage != Inbound::Stage::kFrames; },
        [&](const Inbound& victim) { stranger_warn(victim, "evicted: too many connections in their handshake"); });
    in.reader.expect(wire::expect_exactly(wire::kPeerMagic, wire::FrameType::kPeerHello, sizeof(wire::PeerHello)));
    // A peer's handshake follows its connect at once: reading it now usually completes it, so a
    // flood of strangers queued after the peer cannot evict it.
    pump(in);
  }
}

void Mesh::expire_handshakes() {
  const net::Clock::time_point now = net::Clock::now();
  for (Inbound& in : inbound_) {
    if (in.stage == Inbound::Stage::kFrames || !in.sock.valid() || now < in.since + limits_.hello_timeout) continue;
    stranger_warn(in, "no completed handshake within " + std::to_string(limits_.hello_timeout.count()) +
                          " ms (PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS)");
    in.sock.close();
  }
}

void Mesh::pump(Inbound& in) {
  while (in.sock.valid()) {
    const wire::FrameReader::Status st = in.reader.read_from(in.sock.fd());
    switch (st) {
      case wire::FrameReader::Status::kMore:
        return;
      case wire::FrameReader::Status::kBad:
        if (in.peer < 0) {
          stranger_warn(in, in.reader.error());
        } else {
          // Authenticated, so a broken peer rather than a stranger: its stream cannot be trusted.
          PURLIN_WARN("%s: %s, connected from %s, sent %s; closing its connection", name_.c_str(),
                      describe(in.peer).c_str(), in.from.str().c_str(), in.reader.error().c_str());
          peer_closed_[in.peer] = true;
        }
        in.sock.close();
        return;
      case wire::FrameReader::Status::kClosed:
      case wire::FrameReader::Status::kError:
        if (in.peer >= 0) {
          peer_closed_[in.peer] = true;
          // Between frames, EOF is how a peer that is done (destroyed) says goodbye, and a reset
          // how a dead process's connection ends (it had unread data): lost_peer() tells the two
          // apart by the farewell, and its caller reports a loss once.
          const bool between_frames = in.reader.received() == 0 &&
                                      (st == wire::FrameReader::Status::kClosed || errno == ECONNRESET);
          if (!between_frames) {
            PURLIN_WARN("%s: connection from %s lost mid-message: %s", name_.c_str(), describe(in.peer).c_str(),
                        st == wire::FrameReader::Status::kClosed ? "closed" : std::strerror(errno));
          }
        }
        in.sock.close();
        return;
      case wire::FrameReader::Status::kFrame:
        break;
    }
    switch (in.stage) {
      case Inbound::Stage::kHello:
        on_hello(in);
        break;
      case Inbound::Stage::kProof:
        on_proof(in);
        break;
      case Inbound::Stage::kFrames:
        deliver(in);
        break;
    }
  }
}

void Mesh::on_hello(Inbound& in) {
  in.hello = in.reader.body_as<wire::PeerHello>();
  if (std::string why = wire::check_peer_hello(in.hello, rank_, size()); !why.empty()) {
    stranger_warn(in, "its hello " + why);
    in.sock.close();
    return;
  }
  in.stage = Inbound::Stage::kProof;
  in.reader.expect(wire::expect_exactly(wire::kPeerMagic, wire::FrameType::kProof, sizeof(wire::Proof)));
}

void Mesh::on_proof(Inbound& in) {
  const wire::Nonce& mine = peers_[rank_].accept_nonce;
  const auto proof = in.reader.body_as<wire::Proof>();
  if (!auth::verify(key_, auth::Role::kConnector, &in.hello, sizeof(in.hello), mine, proof.mac)) {
    stranger_warn(in, "its proof is wrong (it does not know this group's mesh key)");
    in.sock.close();
    return;
  }
  const int from = in.hello.from;
  if (peer_connected_[from]) {
    // The first connection keeps the rank; a second claim must not disturb it.
    PURLIN_WARN("%s: rejected a second connection claiming to be rank %d from %s: %s is connected already",
                name_.c_str(), from, in.from.str().c_str(), describe(from).c_str());
    in.sock.close();
    return;
  }
  peer_connected_[from] = true;
  in.peer = from;
  in.stage = Inbound::Stage::kFrames;
  in.reader.expect(wire::expect_data());
  // Our proof, which the peer checks before its second message. Not sending it is no reason to
  // drop the connection: a peer that sent one message and left has still sent it.
  const wire::Proof answer{auth::prove(key_, auth::Role::kAcceptor, &in.hello, sizeof(in.hello), mine)};
  if (!wire::send_frame_now(in.sock.fd(), wire::make_header(wire::kPeerMagic, wire::FrameType::kProof, sizeof(answer)),
                            &answer)) {
    PURLIN_TRACE(kBootstrap, "%s: could not answer %s", name_.c_str(), describe(from).c_str());
  }
}

void Mesh::deliver(Inbound& in) {
  const wire::FrameHeader& h = in.reader.header();
  if (h.channel == static_cast<uint16_t>(wire::Channel::kFarewell)) {
    peer_farewell_[in.peer] = true;  // a state, not a message: nothing ever receives it
    in.reader.expect(wire::expect_data());
    return;
  }
  unexpected_[Key{in.peer, h.channel, h.tag}].push_back(std::move(in.reader.body()));
  in.reader.expect(wire::expect_data());
}

ncclResult_t Mesh::wait_failure(Wait w, const char* op, int peer, int tag) {
  switch (w) {
    case Wait::kAborted:
      PURLIN_INFO(kBootstrap, "%s: %s rank %d (tag %d) interrupted by abort", name_.c_str(), op, peer, tag);
      return ncclRemoteError;
    case Wait::kTimeout:
      PURLIN_WARN("%s: %s %s (tag %d) timed out after %d s", name_.c_str(), op, describe(peer).c_str(), tag,
                  timeout_s_);
      return blame(peer, ncclRemoteError);
    default:
      return ncclSystemError;  // progress() has logged the cause
  }
}

}  // namespace purlin::runtime
