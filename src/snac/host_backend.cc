#include "snac/host_backend.h"

#include <cstdint>
#include <sstream>
#include <thread>

#include "snac/signal_names.h"

namespace purlin::snac {

void HostControl::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (report_.empty()) report_ = reason;
  }
  aborted_.store(true, std::memory_order_release);
}

std::string HostControl::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return report_;
}

int HostBackend::find_mismatch(std::uint64_t& theirs) const {
  return snac::find_mismatch(*this, watch_, theirs);
}

bool HostBackend::mismatch(int peer, std::uint64_t theirs) const {
  mismatched_ = true;
  char mine[128];
  char other[128];
  describe_call(mine, sizeof(mine), watch_.own);
  describe_call(other, sizeof(other), theirs);
  std::ostringstream why;
  why << "SNAC call mismatch at packet flag " << watch_.flag << ": rank " << handle_->rank
      << " (worker " << worker_ << ") called " << mine << ", rank " << peer << " called "
      << other;
  control_->abort(why.str());
  return false;
}

bool HostBackend::Pacer::keep_going() {
  constexpr int kSpins = 64;
  constexpr int kNapMicros = 20;
  if (++spins_ < kSpins) return true;
  spins_ = 0;
  const std::uint64_t round = round_++;
  if (be_.control_->aborted()) return false;
  std::uint64_t theirs = 0;
  if (const int peer = be_.find_mismatch(theirs); peer >= 0) return be_.mismatch(peer, theirs);
  if (round == 0) {
    deadline_ = std::chrono::steady_clock::now() + be_.control_->timeout();
  } else if (round % 256 == 0 && std::chrono::steady_clock::now() > deadline_) {
    std::ostringstream why;
    const Handle& h = *be_.handle_;
    const auto r = static_cast<std::size_t>(h.rank);
    why << "SNAC host wait timed out after " << be_.control_->timeout().count() << " ms: rank "
        << h.rank << " worker " << be_.worker_ << " waits for the "
        << name_polled_word(h.signal_layout(), h.packet_layout(),
                            reinterpret_cast<std::uintptr_t>(h.signals[r]),
                            reinterpret_cast<std::uintptr_t>(h.packets[r]),
                            reinterpret_cast<std::uintptr_t>(word_))
        << " to reach " << want_ << ", it holds " << be_.load_acquire(word_);
    be_.control_->abort(why.str());
    return false;
  }
  if (round < 16) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(kNapMicros));
  }
  return true;
}

}  // namespace purlin::snac
