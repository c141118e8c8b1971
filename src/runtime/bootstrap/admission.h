// Who may wait for a handshake on a bootstrap listener (the root's and every rank's), and how a
// listener keeps accepting when the process runs out of descriptors.
//
// Before its handshake completes a connection may be a rank or a stranger, and the listener
// cannot tell which. So instead of trusting early arrivals it bounds what any connection can
// hold: a deadline for the whole handshake, a cap on pending connections per source host and in
// total, and, when full, the eviction of the pending connection least likely to be a rank. A rank
// speaks the moment it connects, so a silent connection goes before one that has spoken, and
// among equals the oldest goes first: a newcomer is never refused, so strangers cannot lock the
// ranks out by holding every slot.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/bootstrap/socket.h"

namespace purlin::runtime::net {

struct AdmissionLimits {
  size_t max_pending;                        // connections still in their handshake, in total
  size_t max_pending_per_host;               // of those, from one source address
  std::chrono::milliseconds hello_timeout;   // from accept to a completed handshake
};

// PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS (default 5000) and fixed caps (see admission.cc).
AdmissionLimits admission_limits();

// What eviction needs to know of one connection still in its handshake.
struct PendingInfo {
  const Address* from;
  Clock::time_point since;  // accepted at
  int progress;             // handshake messages received so far: 0 while silent
};

// The index in `pending` of the connection to close so that one more from `newcomer` fits
// `limits`, or -1 when it fits already.
ptrdiff_t choose_eviction(const std::vector<PendingInfo>& pending, const Address& newcomer,
                          const AdmissionLimits& limits);

// Admits a new connection into `conns`: drops the closed ones, makes room under `limits` by
// evicting the one choose_eviction picks among those `in_handshake` selects (after `on_evict`
// has seen it), and appends a Conn holding `sock`, `from` and the time. `Conn` has `sock`,
// `from`, `since` and `progress()` (as PendingInfo describes them) and a `sock.valid()`.
template <typename Conn, typename InHandshake, typename OnEvict>
Conn& admit(std::vector<Conn>& conns, Socket sock, const Address& from, const AdmissionLimits& limits,
            InHandshake&& in_handshake, OnEvict&& on_evict) {
  std::erase_if(conns, [](const Conn& c) { return !c.sock.valid(); });
  std::vector<PendingInfo> info;
  std::vector<size_t> index;
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!in_handshake(conns[i])) continue;
    info.push_back({&conns[i].from, conns[i].since, conns[i].progress()});
    index.push_back(i);
  }
  if (const ptrdiff_t victim = choose_eviction(info, from, limits); victim >= 0) {
    on_evict(conns[index[victim]]);
    conns.erase(conns.begin() + static_cast<ptrdiff_t>(index[victim]));
  }
  Conn& c = conns.emplace_back();
  c.sock = std::move(sock);
  c.from = from;
  c.since = Clock::now();
  return c;
}

// Lets a repeated warning through at most `burst` times per interval and counts the rest, so
// that a flood of strangers (or a persistent accept failure) cannot flood the log.
class WarnLimiter {
 public:
  WarnLimiter(Clock::duration interval, int burst) : interval_(interval), burst_(burst) {}
  // True when this occurrence may be logged; `*note` then says how many were held back before
  // it (" (N similar messages not shown)"), or is empty.
  bool allow(std::string* note);

 private:
  Clock::duration interval_;
  int burst_;
  Clock::time_point window_end_{};
  int logged_in_window_ = 0;
  uint64_t held_back_ = 0;
};

// A listening socket that never spins. Out of descriptors (EMFILE and friends), accept() fails
// while the connection stays queued and the listener stays readable, so polling it again at
// once would burn a core; instead the listener is left out of the poll for a backoff that grows
// to 100 ms, and the failure is logged at most once per 10 s.
class Acceptor {
 public:
  Acceptor(Socket listener, std::string owner);

  int fd() const { return listener_.fd(); }
  // The descriptor to poll for new connections: the listener, or -1 while backing off.
  int poll_fd() const;
  // When the caller's poll must return to watch the listener again; time_point::max() if it
  // is watched already.
  Clock::time_point resume_at() const;
  // One new connection; false when none is pending or accept failed (then a backoff starts).
  bool accept(Socket* out, Address* from);

 private:
  Socket listener_;
  std::string owner_;
  Clock::time_point resume_{};
  std::chrono::milliseconds backoff_{0};
  WarnLimiter warn_{std::chrono::seconds(10), 1};
};

}  // namespace purlin::runtime::net
