#include "runtime/bootstrap/root.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

constexpr int64_t kDefaultTimeoutS = 300;
// Far beyond any sane wait, and small enough that deadline arithmetic cannot overflow.
constexpr int64_t kMaxTimeoutS = 1'000'000;

// Legitimate ranks send their hello right after connecting, so a long queue of silent
// connections means strangers; past this many, new ones are turned away.
constexpr size_t kMaxPending = 1024;

struct Pending {
  net::Socket sock;
  net::Address from;
  wire::RootHello hello{};
  size_t got = 0;
};

class Rendezvous {
 public:
  Rendezvous(net::Socket listener, const Secret& secret, int timeout_s)
      : listener_(std::move(listener)), secret_(secret), timeout_s_(timeout_s) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    net::Address self;
    if (::getsockname(listener_.fd(), reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), &self)) {
      name_ = self.str();
    }
  }

  void run() {
    // Idle timeout: every rank that joins restarts it, so the root outlives every rank that is
    // still waiting for it (each rank waits at most timeout_s_ from its own arrival).
    net::Deadline deadline = net::deadline_after(timeout_s_);
    std::vector<pollfd> fds;
    while (nranks_ == 0 || joined_ < nranks_) {
      fds.clear();
      fds.push_back({listener_.fd(), POLLIN, 0});
      for (const Pending& p : pending_) fds.push_back({p.sock.fd(), POLLIN, 0});
      for (const net::Socket& s : ranks_) fds.push_back({s.fd(), POLLIN, 0});  // closed slots: -1, ignored
      int rc = net::poll_until(fds.data(), fds.size(), deadline);
      if (rc < 0) {
        PURLIN_WARN("bootstrap root %s: poll failed: %s", name_.c_str(), std::strerror(errno));
        return;
      }
      if (rc == 0) {
        PURLIN_WARN("bootstrap root %s: gave up after %d s without a new rank (%d of %d ranks had joined)",
                    name_.c_str(), timeout_s_, joined_, nranks_);
        return;
      }
      const size_t npending = pending_.size();
      for (size_t r = 0; r < ranks_.size(); ++r) {
        if (fds[1 + npending + r].revents != 0) watch_joined(static_cast<int>(r));
      }
      for (size_t i = 0; i < npending; ++i) {
        if (fds[1 + i].revents != 0 && read_hello(pending_[i])) deadline = net::deadline_after(timeout_s_);
      }
      std::erase_if(pending_, [](const Pending& p) { return !p.sock.valid(); });
      if (fds[0].revents != 0) accept_new();
    }
    release();
  }

 private:
  void accept_new() {
    net::Socket s;
    net::Address from;
    while (net::accept_one(listener_.fd(), &s, &from)) {
      if (pending_.size() >= kMaxPending) {
        PURLIN_WARN("bootstrap root %s: %zu connections have not said hello; dropping %s", name_.c_str(),
                    pending_.size(), from.str().c_str());
        continue;  // `s` is closed by the next accept or on return
      }
      pending_.push_back(Pending{std::move(s), from});
    }
  }

  // A joined rank has nothing more to say, so readability means it went away (or misbehaved):
  // free its slot so that a restarted process can take it.
  void watch_joined(int rank) {
    uint8_t byte = 0;
    size_t n = 0;
    if (net::read_some(ranks_[rank].fd(), &byte, 1, &n) == net::Io::kWouldBlock) return;
    PURLIN_WARN("bootstrap root %s: rank %d disconnected before the group formed", name_.c_str(), rank);
    ranks_[rank].close();
    --joined_;
  }

  // Returns true when the connection joined the group.
  bool read_hello(Pending& p) {
    auto* buf = reinterpret_cast<uint8_t*>(&p.hello);
    size_t n = 0;
    net::Io io = net::read_some(p.sock.fd(), buf + p.got, sizeof(p.hello) - p.got, &n);
    if (io == net::Io::kWouldBlock) return false;
    if (io != net::Io::kProgress) {
      PURLIN_TRACE(kBootstrap, "bootstrap root %s: %s left before its hello", name_.c_str(), p.from.str().c_str());
      p.sock.close();
      return false;
    }
    p.got += n;
    if (p.got < sizeof(p.hello)) return false;

    const wire::RootHello& h = p.hello;
    if (h.magic != wire::kRootHelloMagic || !secrets_equal(h.secret, secret_)) {
      PURLIN_WARN("bootstrap root %s: rejected a connection from %s: wrong secret", name_.c_str(),
                  p.from.str().c_str());
      p.sock.close();
      return false;
    }
    net::Address listen;
    if (h.nranks <= 0 || h.nranks > wire::kMaxRanks || h.rank < 0 || h.rank >= h.nranks ||
        !net::Address::from_wire(h.listen, &listen)) {
      reject(p, wire::RootStatus::kBadRank, "rank, nranks or address out of range");
      return false;
    }
    if (nranks_ != 0 && h.nranks != nranks_) {
      reject(p, wire::RootStatus::kNranksMismatch, "nranks differs from the group's");
      return false;
    }
    if (nranks_ != 0 && ranks_[h.rank].valid()) {
      reject(p, wire::RootStatus::kDuplicateRank, "this rank has already joined");
      return false;
    }
    if (nranks_ == 0) {
      nranks_ = h.nranks;
      ranks_.resize(nranks_);
      addrs_.resize(nranks_);
    }
    PURLIN_TRACE(kBootstrap, "bootstrap root %s: rank %d/%d joined from %s, listening on %s", name_.c_str(), h.rank,
                 nranks_, p.from.str().c_str(), listen.str().c_str());
    ranks_[h.rank] = std::move(p.sock);
    addrs_[h.rank] = h.listen;
    ++joined_;
    return true;
  }

  void reject(Pending& p, wire::RootStatus status, const char* why) {
    PURLIN_WARN("bootstrap root %s: rejected rank %d (nranks %d) from %s: %s (group nranks %d)", name_.c_str(),
                p.hello.rank, p.hello.nranks, p.from.str().c_str(), why, nranks_);
    const wire::RootReply reply{static_cast<int32_t>(status), nranks_};
    // Best effort: the reply fits in any socket buffer, and the rank fails either way.
    net::send_all(p.sock.fd(), &reply, sizeof(reply), net::deadline_after(1), nullptr, "rejecting a rank");
    p.sock.close();
  }

  void release() {
    const wire::RootReply reply{static_cast<int32_t>(wire::RootStatus::kOk), nranks_};
    std::vector<uint8_t> msg(sizeof(reply) + addrs_.size() * sizeof(net::WireAddress));
    std::memcpy(msg.data(), &reply, sizeof(reply));
    std::memcpy(msg.data() + sizeof(reply), addrs_.data(), addrs_.size() * sizeof(net::WireAddress));
    const net::Deadline deadline = net::deadline_after(timeout_s_);
    for (net::Socket& s : ranks_) {
      // A rank that cannot be told fails on its own; the others still get their table.
      net::send_all(s.fd(), msg.data(), msg.size(), deadline, nullptr, "sending the address table");
      s.close();
    }
    PURLIN_INFO(kBootstrap, "bootstrap root %s: group of %d ranks formed", name_.c_str(), nranks_);
  }

  net::Socket listener_;
  Secret secret_;
  int timeout_s_;
  std::string name_ = "?";
  int nranks_ = 0;  // fixed by the first rank to join
  int joined_ = 0;
  std::vector<net::Socket> ranks_;        // [rank]: its connection, while it waits for the table
  std::vector<net::WireAddress> addrs_;   // [rank]: its listen address
  std::vector<Pending> pending_;
};

}  // namespace

int bootstrap_timeout_s() {
  int64_t t = env::get_int("PURLIN_BOOTSTRAP_TIMEOUT", kDefaultTimeoutS);
  if (t <= 0) {
    PURLIN_WARN("PURLIN_BOOTSTRAP_TIMEOUT=%lld is not positive; using %lld s", static_cast<long long>(t),
                static_cast<long long>(kDefaultTimeoutS));
    t = kDefaultTimeoutS;
  }
  return static_cast<int>(t < kMaxTimeoutS ? t : kMaxTimeoutS);
}

ncclResult_t start_root(net::Socket listener, const Secret& secret, int timeout_s) {
  try {
    auto rendezvous = std::make_unique<Rendezvous>(std::move(listener), secret, timeout_s);
    std::thread([rendezvous = std::move(rendezvous)] {
      // Detached: nothing may escape, or std::terminate would take the application down.
      try {
        rendezvous->run();
      } catch (const std::exception& e) {
        PURLIN_WARN("bootstrap root: stopped: %s", e.what());
      } catch (...) {
        PURLIN_WARN("bootstrap root: stopped: unknown exception");
      }
    }).detach();
  } catch (const std::exception& e) {
    PURLIN_WARN("bootstrap: cannot start the root thread: %s", e.what());
    return ncclSystemError;
  } catch (...) {
    PURLIN_WARN("bootstrap: cannot start the root thread: unknown exception");
    return ncclSystemError;
  }
  return ncclSuccess;
}

}  // namespace purlin::runtime
