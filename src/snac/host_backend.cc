#include "snac/host_backend.h"

#include <sstream>
#include <thread>

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

bool HostBackend::wait_at_least(const Flag* word, Flag value) const {
  // Spin briefly (the common case: the producer is running), yield for a while, then sleep in
  // short naps: host worlds run several times more threads than cores, and a waiter that keeps
  // yielding still takes a core (and a syscall) from the thread it waits for.
  constexpr int kSpins = 64;
  constexpr int kNapMicros = 20;
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline{};
  for (std::uint64_t round = 0;; ++round) {
    for (int i = 0; i < kSpins; ++i) {
      if (load_acquire(word) >= value) return true;
    }
    if (control_->aborted()) return false;
    if (round == 0) {
      deadline = Clock::now() + control_->timeout();
    } else if (round % 256 == 0 && Clock::now() > deadline) {
      std::ostringstream why;
      why << "SNAC host wait timed out after " << control_->timeout().count() << " ms: rank "
          << rank_ << " worker " << worker_ << " waits for word " << word << " >= " << value
          << ", it holds " << load_acquire(word);
      control_->abort(why.str());
      return false;
    }
    if (round < 16) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(kNapMicros));
    }
  }
}

}  // namespace purlin::snac
