#include "runtime/bootstrap/mesh.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <utility>

#include "base/log.h"

namespace purlin::runtime {
namespace {

// Peers say hello right after connecting; many silent connections mean strangers.
constexpr size_t kMaxUnauthenticated = 1024;

}  // namespace

ncclResult_t Mesh::create(int rank, std::vector<net::Address> peers, const Secret& secret, net::Socket listener,
                          int timeout_s, std::unique_ptr<Mesh>* out) {
  std::unique_ptr<Mesh> mesh(new Mesh(rank, std::move(peers), secret, std::move(listener), timeout_s));
  if (ncclResult_t r = mesh->abort_.open(); r != ncclSuccess) return r;
  *out = std::move(mesh);
  return ncclSuccess;
}

Mesh::Mesh(int rank, std::vector<net::Address> peers, const Secret& secret, net::Socket listener, int timeout_s)
    : rank_(rank),
      peers_(std::move(peers)),
      secret_(secret),
      listener_(std::move(listener)),
      timeout_s_(timeout_s),
      outbound_(peers_.size()),
      outbound_broken_(peers_.size(), false),
      peer_connected_(peers_.size(), false),
      peer_closed_(peers_.size(), false) {}

void Mesh::abort() { abort_.raise(); }

ncclResult_t Mesh::send(int peer, wire::Channel channel, int tag, const void* data, size_t bytes) {
  if (abort_.raised()) return ncclRemoteError;
  if (peer < 0 || peer >= size() || (bytes > 0 && data == nullptr)) {
    PURLIN_WARN("bootstrap rank %d: send to rank %d of %d with %zu bytes at %p: invalid argument", rank_, peer,
                size(), bytes, data);
    return ncclInvalidArgument;
  }
  if (peer == rank_) {
    const auto* p = static_cast<const uint8_t*>(data);
    unexpected_[Key{peer, static_cast<uint32_t>(channel), tag}].emplace_back(p, p + bytes);
    return ncclSuccess;
  }
  if (outbound_broken_[peer]) {
    PURLIN_WARN("bootstrap rank %d: the connection to rank %d broke during an earlier send", rank_, peer);
    return ncclRemoteError;
  }
  const net::Deadline deadline = net::deadline_after(timeout_s_);
  ncclResult_t r = ncclSuccess;
  if (!outbound_[peer].valid()) r = connect_peer(peer, deadline);
  const wire::FrameHeader header{tag, static_cast<uint32_t>(channel), bytes};
  if (r == ncclSuccess) r = write_progressing(peer, &header, sizeof(header), deadline, tag);
  if (r == ncclSuccess && bytes > 0) r = write_progressing(peer, data, bytes, deadline, tag);
  if (r != ncclSuccess) {
    // Part of a frame may be on the wire; anything sent after it would be misparsed.
    outbound_broken_[peer] = true;
    outbound_[peer].close();
  }
  return r;
}

ncclResult_t Mesh::recv(int peer, wire::Channel channel, int tag, void* data, size_t bytes) {
  if (abort_.raised()) return ncclRemoteError;
  if (peer < 0 || peer >= size() || (bytes > 0 && data == nullptr)) {
    PURLIN_WARN("bootstrap rank %d: recv from rank %d of %d with %zu bytes at %p: invalid argument", rank_, peer,
                size(), bytes, data);
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
        PURLIN_WARN("bootstrap rank %d: message from rank %d (tag %d) has %zu bytes, %zu expected", rank_, peer,
                    tag, msg.size(), bytes);
        return ncclInvalidUsage;
      }
      if (bytes > 0) std::memcpy(data, msg.data(), bytes);
      return ncclSuccess;
    }
    if (peer == rank_) {
      PURLIN_WARN("bootstrap rank %d: recv from itself (tag %d) without a matching earlier send", rank_, tag);
      return ncclInvalidUsage;
    }
    if (peer_closed_[peer]) {
      PURLIN_WARN("bootstrap rank %d: rank %d closed its connection; no message with tag %d will come", rank_,
                  peer, tag);
      return ncclRemoteError;
    }
    if (Wait w = progress(-1, deadline, nullptr); w != Wait::kReady) return wait_failure(w, "recv from", peer, tag);
  }
}

ncclResult_t Mesh::connect_peer(int peer, net::Deadline deadline) {
  net::Socket s;
  if (ncclResult_t r = net::connect_to(peers_[peer], deadline, &abort_, net::Refused::kIsFinal, &s); r != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d: cannot connect to rank %d at %s", rank_, peer, peers_[peer].str().c_str());
    return r;
  }
  outbound_[peer] = std::move(s);
  const wire::PeerHello hello{wire::kPeerHelloMagic, secret_, rank_, peer};
  return write_progressing(peer, &hello, sizeof(hello), deadline, -1);
}

ncclResult_t Mesh::write_progressing(int peer, const void* data, size_t bytes, net::Deadline deadline, int tag) {
  const int fd = outbound_[peer].fd();
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
      PURLIN_WARN("bootstrap rank %d: send to rank %d (tag %d) failed: %s", rank_, peer, tag, std::strerror(errno));
      return ncclRemoteError;
    }
    for (bool writable = false; !writable;) {
      if (Wait w = progress(fd, deadline, &writable); w != Wait::kReady) return wait_failure(w, "send to", peer, tag);
    }
  }
  return ncclSuccess;
}

Mesh::Wait Mesh::progress(int out_fd, net::Deadline deadline, bool* writable) {
  std::vector<pollfd> fds;
  fds.reserve(3 + inbound_.size());
  fds.push_back({abort_.fd(), POLLIN, 0});
  fds.push_back({listener_.fd(), POLLIN, 0});
  fds.push_back({out_fd, POLLOUT, 0});  // -1: nothing to write, ignored by poll
  for (const Inbound& in : inbound_) fds.push_back({in.sock.fd(), POLLIN, 0});
  const int rc = net::poll_until(fds.data(), fds.size(), deadline);
  if (abort_.raised()) return Wait::kAborted;
  if (rc < 0) {
    PURLIN_WARN("bootstrap rank %d: poll failed: %s", rank_, std::strerror(errno));
    return Wait::kError;
  }
  if (rc == 0) return Wait::kTimeout;
  const size_t count = inbound_.size();
  for (size_t i = 0; i < count; ++i) {
    if (fds[3 + i].revents != 0) pump(inbound_[i]);
  }
  std::erase_if(inbound_, [](const Inbound& in) { return !in.sock.valid(); });
  if (fds[1].revents != 0) accept_new();
  // POLLERR / POLLHUP count as writable: the next write then reports the actual error.
  if (writable != nullptr) *writable = fds[2].revents != 0;
  return Wait::kReady;
}

void Mesh::accept_new() {
  net::Socket s;
  net::Address from;
  while (net::accept_one(listener_.fd(), &s, &from)) {
    const auto strangers =
        std::count_if(inbound_.begin(), inbound_.end(), [](const Inbound& in) { return in.peer < 0; });
    if (static_cast<size_t>(strangers) >= kMaxUnauthenticated) {
      PURLIN_WARN("bootstrap rank %d: %zu connections have not said hello; dropping %s", rank_,
                  static_cast<size_t>(strangers), from.str().c_str());
      continue;  // `s` is closed by the next accept or on return
    }
    Inbound in;
    in.sock = std::move(s);
    in.from = from;
    inbound_.push_back(std::move(in));
  }
}

void Mesh::pump(Inbound& in) {
  for (;;) {
    uint8_t* dst = nullptr;
    size_t want = 0;
    switch (in.stage) {
      case Inbound::Stage::kHello:
        dst = reinterpret_cast<uint8_t*>(&in.hello);
        want = sizeof(in.hello);
        break;
      case Inbound::Stage::kHeader:
        dst = reinterpret_cast<uint8_t*>(&in.header);
        want = sizeof(in.header);
        break;
      case Inbound::Stage::kPayload:
        dst = in.payload.data();
        want = in.payload.size();
        break;
    }
    if (in.got < want) {
      size_t n = 0;
      const net::Io io = net::read_some(in.sock.fd(), dst + in.got, want - in.got, &n);
      if (io == net::Io::kWouldBlock) return;
      if (io != net::Io::kProgress) {
        if (in.peer >= 0) {
          peer_closed_[in.peer] = true;
          // Between frames, EOF is how a peer that is done (destroyed) says goodbye.
          if (io != net::Io::kClosed || in.stage != Inbound::Stage::kHeader || in.got != 0) {
            PURLIN_WARN("bootstrap rank %d: connection from rank %d lost mid-message: %s", rank_, in.peer,
                        io == net::Io::kClosed ? "closed" : std::strerror(errno));
          }
        }
        in.sock.close();
        return;
      }
      in.got += n;
      if (in.got < want) continue;
    }
    switch (in.stage) {
      case Inbound::Stage::kHello:
        if (!accept_hello(in)) {
          in.sock.close();
          return;
        }
        in.stage = Inbound::Stage::kHeader;
        break;
      case Inbound::Stage::kHeader:
        try {
          in.payload.resize(in.header.bytes);
        } catch (const std::exception&) {
          // Unreachable for a sane peer; a WARN and a failed recv beat std::terminate.
          PURLIN_WARN("bootstrap rank %d: cannot buffer a %llu-byte message from rank %d", rank_,
                      static_cast<unsigned long long>(in.header.bytes), in.peer);
          peer_closed_[in.peer] = true;
          in.sock.close();
          return;
        }
        in.stage = Inbound::Stage::kPayload;
        break;
      case Inbound::Stage::kPayload:
        deliver(in);
        in.stage = Inbound::Stage::kHeader;
        break;
    }
    in.got = 0;
  }
}

bool Mesh::accept_hello(Inbound& in) {
  const wire::PeerHello& h = in.hello;
  if (h.magic != wire::kPeerHelloMagic || !secrets_equal(h.secret, secret_)) {
    PURLIN_WARN("bootstrap rank %d: rejected a connection from %s: wrong secret", rank_, in.from.str().c_str());
    return false;
  }
  if (h.to != rank_ || h.from < 0 || h.from >= size() || h.from == rank_ || peer_connected_[h.from]) {
    PURLIN_WARN("bootstrap rank %d: rejected a connection from %s claiming to be rank %d -> %d%s", rank_,
                in.from.str().c_str(), h.from, h.to,
                (h.from >= 0 && h.from < size() && peer_connected_[h.from]) ? " (already connected)" : "");
    return false;
  }
  peer_connected_[h.from] = true;
  in.peer = h.from;
  return true;
}

void Mesh::deliver(Inbound& in) {
  unexpected_[Key{in.peer, in.header.channel, in.header.tag}].push_back(std::move(in.payload));
  in.payload = {};
}

ncclResult_t Mesh::wait_failure(Wait w, const char* op, int peer, int tag) {
  switch (w) {
    case Wait::kAborted:
      PURLIN_INFO(kBootstrap, "bootstrap rank %d: %s rank %d (tag %d) interrupted by abort", rank_, op, peer, tag);
      return ncclRemoteError;
    case Wait::kTimeout:
      PURLIN_WARN("bootstrap rank %d: %s rank %d (tag %d) timed out after %d s", rank_, op, peer, tag, timeout_s_);
      return ncclRemoteError;
    default:
      return ncclSystemError;  // progress() has logged the cause
  }
}

}  // namespace purlin::runtime
