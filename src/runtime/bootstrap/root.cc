#include "runtime/bootstrap/root.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "runtime/bootstrap/admission.h"
#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

constexpr int64_t kDefaultTimeoutS = 300;
// Far beyond any sane wait, and small enough that deadline arithmetic cannot overflow.
constexpr int64_t kMaxTimeoutS = 1'000'000;

// A connection in its handshake: kHello until its hello has arrived and been answered with a
// challenge, then kProof until its proof has been checked.
struct Pending {
  enum class Stage { kHello, kProof };
  net::Socket sock;
  net::Address from;
  net::Clock::time_point since;
  Stage stage = Stage::kHello;
  wire::FrameReader reader;
  wire::RootHello hello{};
  wire::Nonce server_nonce{};

  int progress() const { return stage == Stage::kProof ? 2 : (reader.received() > 0 ? 1 : 0); }
};

class Rendezvous {
 public:
  Rendezvous(net::Socket listener, const Secret& secret, const wire::Nonce& group, int timeout_s)
      : key_(auth::root_key(secret)), group_(group), timeout_s_(timeout_s), limits_(net::admission_limits()) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    net::Address self;
    if (::getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        net::Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), &self)) {
      name_ = "bootstrap root " + self.str();
    }
    acceptor_ = std::make_unique<net::Acceptor>(std::move(listener), name_);
  }

  void run() {
    idle_ = net::deadline_after(timeout_s_);
    std::vector<pollfd> fds;
    while (nranks_ == 0 || joined_ < nranks_) {
      fds.clear();
      fds.push_back({acceptor_->poll_fd(), POLLIN, 0});
      net::Clock::time_point wake = std::min(idle_, acceptor_->resume_at());
      for (const Pending& p : pending_) {
        fds.push_back({p.sock.fd(), POLLIN, 0});
        wake = std::min(wake, p.since + limits_.hello_timeout);
      }
      for (const net::Socket& s : ranks_) fds.push_back({s.fd(), POLLIN, 0});  // closed slots: -1, ignored
      if (net::poll_until(fds.data(), fds.size(), wake) < 0) {
        PURLIN_WARN("%s: poll failed: %s", name_.c_str(), std::strerror(errno));
        return;
      }
      if (net::Clock::now() >= idle_) {
        PURLIN_WARN("%s: gave up after %d s without a new rank (%d of %d ranks had joined)", name_.c_str(),
                    timeout_s_, joined_, nranks_);
        return;
      }
      const size_t npending = pending_.size();
      for (size_t r = 0; r < ranks_.size(); ++r) {
        if (fds[1 + npending + r].revents != 0) watch_joined(static_cast<int>(r));
      }
      for (size_t i = 0; i < npending; ++i) {
        if (fds[1 + i].revents != 0 && advance(pending_[i])) idle_ = net::deadline_after(timeout_s_);
      }
      expire_handshakes();
      std::erase_if(pending_, [](const Pending& p) { return !p.sock.valid(); });
      if (fds[0].revents != 0) accept_new();
    }
    release();
  }

 private:
  // Strangers can make these happen at will: they are rate-limited, and say who and why.
  void stranger_warn(const Pending& p, const char* what, const std::string& why) {
    std::string note;
    if (!stranger_log_.allow(&note)) return;
    PURLIN_WARN("%s: closed a connection from %s: %s%s%s", name_.c_str(), p.from.str().c_str(), what, why.c_str(),
                note.c_str());
  }

  void accept_new() {
    net::Socket s;
    net::Address from;
    while (acceptor_->accept(&s, &from)) {
      Pending& p = net::admit(
          pending_, std::move(s), from, limits_, [](const Pending&) { return true; },
          [&](const Pending& victim) { stranger_warn(victim, "evicted: ", "too many connections in their handshake"); });
      p.reader.expect(wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootHello, sizeof(wire::RootHello)));
      // A rank's hello follows its connect at once: reading it now moves the rank ahead of the
      // silent connections that a flood of strangers queued after it, which are evicted first.
      if (advance(p)) idle_ = net::deadline_after(timeout_s_);
    }
  }

  void expire_handshakes() {
    const net::Clock::time_point now = net::Clock::now();
    for (Pending& p : pending_) {
      if (p.sock.valid() && now >= p.since + limits_.hello_timeout) {
        stranger_warn(p, "no completed handshake within ",
                      std::to_string(limits_.hello_timeout.count()) + " ms (PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS)");
        p.sock.close();
      }
    }
  }

  // A joined rank has nothing more to say, so readability means it went away (or misbehaved):
  // free its slot so that a restarted process can take it.
  void watch_joined(int rank) {
    uint8_t byte = 0;
    size_t n = 0;
    if (net::read_some(ranks_[rank].fd(), &byte, 1, &n) == net::Io::kWouldBlock) return;
    PURLIN_WARN("%s: rank %d disconnected before the group formed", name_.c_str(), rank);
    ranks_[rank].close();
    --joined_;
  }

  // Moves a handshake on with what has arrived. Returns true when the connection joined the group.
  bool advance(Pending& p) {
    switch (p.reader.read_from(p.sock.fd())) {
      case wire::FrameReader::Status::kMore:
        return false;
      case wire::FrameReader::Status::kBad:
        stranger_warn(p, "", p.reader.error());
        p.sock.close();
        return false;
      case wire::FrameReader::Status::kClosed:
      case wire::FrameReader::Status::kError:
        PURLIN_TRACE(kBootstrap, "%s: %s left during its handshake", name_.c_str(), p.from.str().c_str());
        p.sock.close();
        return false;
      case wire::FrameReader::Status::kFrame:
        break;
    }
    if (p.stage == Pending::Stage::kHello) {
      challenge(p);
      return false;
    }
    const auto proof = p.reader.body_as<wire::Proof>();
    if (!auth::verify(key_, auth::Role::kRank, &p.hello, sizeof(p.hello), p.server_nonce, proof.mac)) {
      stranger_warn(p, "", "its proof is wrong (it does not know the group secret)");
      p.sock.close();
      return false;
    }
    return join(p);
  }

  void challenge(Pending& p) {
    p.hello = p.reader.body_as<wire::RootHello>();
    if (std::string why = wire::check_root_hello(p.hello); !why.empty()) {
      stranger_warn(p, "unusable hello: ", why);
      p.sock.close();
      return;
    }
    wire::Challenge c{};
    if (auth::random_bytes(c.nonce.bytes, sizeof(c.nonce.bytes)) != ncclSuccess) {
      p.sock.close();
      return;
    }
    c.mac = auth::prove(key_, auth::Role::kRoot, &p.hello, sizeof(p.hello), c.nonce);
    p.server_nonce = c.nonce;
    if (!wire::send_frame_now(p.sock.fd(), wire::make_header(wire::kRootMagic, wire::FrameType::kChallenge, sizeof(c)),
                              &c)) {
      PURLIN_TRACE(kBootstrap, "%s: cannot send a challenge to %s", name_.c_str(), p.from.str().c_str());
      p.sock.close();
      return;
    }
    p.stage = Pending::Stage::kProof;
    p.reader.expect(wire::expect_exactly(wire::kRootMagic, wire::FrameType::kProof, sizeof(wire::Proof)));
  }

  // An authenticated rank: the first to claim a rank keeps it, and the first fixes nranks; a
  // later claim is answered and closed without touching the holder.
  bool join(Pending& p) {
    const wire::RootHello& h = p.hello;
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
      table_.resize(nranks_);
      froms_.resize(nranks_);
    }
    net::Address listen;
    net::Address::from_wire(h.listen, &listen);
    PURLIN_TRACE(kBootstrap, "%s: rank %d/%d joined from %s, listening on %s", name_.c_str(), h.rank, nranks_,
                 p.from.str().c_str(), listen.str().c_str());
    ranks_[h.rank] = std::move(p.sock);
    table_[h.rank] = {h.listen, h.accept_nonce};
    froms_[h.rank] = p.from;
    ++joined_;
    return true;
  }

  void reject(Pending& p, wire::RootStatus status, const char* why) {
    const std::string holder = ranks_.empty() || !ranks_[p.hello.rank].valid() ? "" : froms_[p.hello.rank].str();
    PURLIN_WARN("%s: rejected rank %d (nranks %d) from %s: %s (group nranks %d%s%s)", name_.c_str(), p.hello.rank,
                p.hello.nranks, p.from.str().c_str(), why, nranks_, holder.empty() ? "" : ", held by ",
                holder.c_str());
    const wire::RootReply reply{static_cast<int32_t>(status), nranks_, {}};
    // Best effort: the reply fits in any socket buffer, and the rank fails either way.
    wire::send_frame(p.sock.fd(), wire::make_header(wire::kRootMagic, wire::FrameType::kRootReply, sizeof(reply)),
                     &reply, net::deadline_after(1), nullptr, "rejecting a rank");
    p.sock.close();
  }

  void release() {
    const wire::RootReply reply{static_cast<int32_t>(wire::RootStatus::kOk), nranks_, group_};
    const auto reply_header = wire::make_header(wire::kRootMagic, wire::FrameType::kRootReply, sizeof(reply));
    const auto table_header =
        wire::make_header(wire::kRootMagic, wire::FrameType::kRootTable, table_.size() * sizeof(wire::TableEntry));
    const net::Deadline deadline = net::deadline_after(timeout_s_);
    for (net::Socket& s : ranks_) {
      // A rank that cannot be told fails on its own; the others still get their table.
      if (wire::send_frame(s.fd(), reply_header, &reply, deadline, nullptr, "sending the root's reply") ==
          ncclSuccess) {
        wire::send_frame(s.fd(), table_header, table_.data(), deadline, nullptr, "sending the address table");
      }
      s.close();
    }
    PURLIN_INFO(kBootstrap, "%s: group of %d ranks formed", name_.c_str(), nranks_);
  }

  const auth::Key key_;
  const wire::Nonce group_;
  const int timeout_s_;
  const net::AdmissionLimits limits_;
  std::string name_ = "bootstrap root ?";
  std::unique_ptr<net::Acceptor> acceptor_;
  // Every rank that joins restarts it, so the root outlives every rank that is still waiting for
  // it (each rank waits at most timeout_s_ from its own arrival).
  net::Deadline idle_;
  net::WarnLimiter stranger_log_{std::chrono::seconds(1), 8};
  int nranks_ = 0;  // fixed by the first rank to join
  int joined_ = 0;
  std::vector<net::Socket> ranks_;        // [rank]: its connection, while it waits for the table
  std::vector<wire::TableEntry> table_;   // [rank]: its listen address and accept nonce
  std::vector<net::Address> froms_;       // [rank]: where it connected from, for logs
  std::vector<Pending> pending_;
};

}  // namespace

int bootstrap_timeout_s() {
  return static_cast<int>(env::get_positive_int("PURLIN_BOOTSTRAP_TIMEOUT", kDefaultTimeoutS, kMaxTimeoutS));
}

ncclResult_t start_root(net::Socket listener, const Secret& secret, int timeout_s) {
  wire::Nonce group;
  if (ncclResult_t r = auth::random_bytes(group.bytes, sizeof(group.bytes)); r != ncclSuccess) return r;
  try {
    auto rendezvous = std::make_unique<Rendezvous>(std::move(listener), secret, group, timeout_s);
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
