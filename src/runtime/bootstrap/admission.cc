#include "runtime/bootstrap/admission.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/env.h"
#include "base/log.h"

namespace purlin::runtime::net {
namespace {

// A rank answers within a round trip, so 5 s leaves ample slack for a loaded host while a
// stranger's slot frees quickly.
constexpr int64_t kDefaultHelloTimeoutMs = 5000;
constexpr int64_t kMaxHelloTimeoutMs = 3'600'000;

// Far above the ranks that connect to one listener at once (the root sees at most one
// connection per rank of the group, a rank's listener one per peer, and an NVLink domain has
// at most a few hundred ranks), and small enough that strangers cannot use up descriptors.
constexpr size_t kMaxPending = 512;
constexpr size_t kMaxPendingPerHost = 256;

constexpr std::chrono::milliseconds kFirstBackoff{5};
constexpr std::chrono::milliseconds kMaxBackoff{100};

}  // namespace

AdmissionLimits admission_limits() {
  const int64_t ms = env::get_positive_int("PURLIN_BOOTSTRAP_HELLO_TIMEOUT_MS", kDefaultHelloTimeoutMs,
                                           kMaxHelloTimeoutMs);
  return {kMaxPending, kMaxPendingPerHost, std::chrono::milliseconds(ms)};
}

ptrdiff_t choose_eviction(const std::vector<PendingInfo>& pending, const Address& newcomer,
                          const AdmissionLimits& limits) {
  const size_t same_host = static_cast<size_t>(std::count_if(
      pending.begin(), pending.end(), [&](const PendingInfo& p) { return p.from->same_host(newcomer); }));
  const bool host_full = same_host >= limits.max_pending_per_host;
  if (!host_full && pending.size() < limits.max_pending) return -1;
  ptrdiff_t victim = -1;
  for (size_t i = 0; i < pending.size(); ++i) {
    const PendingInfo& p = pending[i];
    // A full host gives up one of its own connections; otherwise anyone's may go.
    if (host_full && !p.from->same_host(newcomer)) continue;
    if (victim < 0 || std::pair(p.progress, p.since) < std::pair(pending[victim].progress, pending[victim].since)) {
      victim = static_cast<ptrdiff_t>(i);
    }
  }
  return victim;
}

bool WarnLimiter::allow(std::string* note) {
  const Clock::time_point now = Clock::now();
  if (now >= window_end_) {
    window_end_ = now + interval_;
    logged_in_window_ = 0;
  }
  if (logged_in_window_ >= burst_) {
    ++held_back_;
    return false;
  }
  ++logged_in_window_;
  note->clear();
  if (held_back_ > 0) note->append(" (" + std::to_string(std::exchange(held_back_, 0)) + " similar messages not shown)");
  return true;
}

Acceptor::Acceptor(Socket listener, std::string owner) : listener_(std::move(listener)), owner_(std::move(owner)) {}

int Acceptor::poll_fd() const { return Clock::now() < resume_ ? -1 : listener_.fd(); }

Clock::time_point Acceptor::resume_at() const {
  return Clock::now() < resume_ ? resume_ : Clock::time_point::max();
}

bool Acceptor::accept(Socket* out, Address* from) {
  if (Clock::now() < resume_) return false;
  const Accepted a = accept_one(listener_.fd(), out, from);
  if (a == Accepted::kOne) {
    backoff_ = std::chrono::milliseconds(0);
    return true;
  }
  if (a == Accepted::kNone) return false;
  const int err = errno;
  backoff_ = std::clamp(backoff_ * 2, kFirstBackoff, kMaxBackoff);
  resume_ = Clock::now() + backoff_;
  std::string note;
  if (warn_.allow(&note)) {
    PURLIN_WARN("%s: accept failed: %s%s; pausing new connections for up to %lld ms%s", owner_.c_str(),
                std::strerror(err), a == Accepted::kExhausted ? " (out of descriptors or memory)" : "",
                static_cast<long long>(kMaxBackoff.count()), note.c_str());
  }
  return false;
}

}  // namespace purlin::runtime::net
