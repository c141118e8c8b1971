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
      const Handle& h = *handle_;
      const auto r = static_cast<std::size_t>(h.rank);
      why << "SNAC host wait timed out after " << control_->timeout().count() << " ms: rank "
          << h.rank << " worker " << worker_ << " waits for the "
          << name_polled_word(h.signal_layout(), h.packet_layout(),
                              reinterpret_cast<std::uintptr_t>(h.signals[r]),
                              reinterpret_cast<std::uintptr_t>(h.packets[r]),
                              reinterpret_cast<std::uintptr_t>(word))
          << " to reach " << value << ", it holds " << load_acquire(word);
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
