// The host execution backend: one CPU thread plays one CTA, so a worker has one lane and its
// barrier is a no-op. Peer memory is ordinary process memory; flags use std::atomic_ref with
// acquire/release, which is what makes the SNAC protocol checkable by ThreadSanitizer: every
// staging, packet and output access of the engine is a plain access ordered only by the
// protocol's own flags, exactly as on the GPU.
//
// Waits are bounded: a wait that outlives the control's timeout aborts the whole world (every
// other waiting worker then returns too) and leaves a report naming the rank, worker, word and
// values, so a protocol bug fails a test instead of hanging CI.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "atom/host_atom.h"
#include "snac/backend.h"
#include "snac/datapath.h"
#include "snac/fingerprint.h"
#include "snac/handle.h"

namespace purlin::snac {

// Shared by every worker of a host world: the abort switch and the first failure's report.
class HostControl {
 public:
  explicit HostControl(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  std::chrono::milliseconds timeout() const { return timeout_; }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // Keeps the first reason: later aborts are consequences of it.
  void abort(const std::string& reason);
  std::string report() const;

 private:
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mutex_;
  std::string report_;
};

class HostBackend {
 public:
  using Atom = atom::HostAtom<>;

  HostBackend(HostControl& control, const Handle& handle, int worker)
      : control_(&control),
        handle_(&handle),
        worker_(worker),
        table_(static_cast<std::size_t>(handle.ranks)) {}

  int worker() const { return worker_; }
  bool leader() const { return true; }
  int lane() const { return 0; }
  int lanes() const { return 1; }
  void sync() const {}
  bool sync_and(bool p) const { return p; }
  static constexpr int group_lanes = 1;
  template <class T>
  T from_group_lane(T v, int) const {
    return v;
  }

  Flag load_acquire(const Flag* word) const {
    return std::atomic_ref<Flag>(*const_cast<Flag*>(word)).load(std::memory_order_acquire);
  }
  void store_release(Flag* word, Flag value) const {
    std::atomic_ref<Flag>(*word).store(value, std::memory_order_release);
  }
  std::uint64_t fetch_add(std::uint64_t* word, std::uint64_t v) const {
    return std::atomic_ref<std::uint64_t>(*word).fetch_add(v, std::memory_order_acq_rel);
  }
  void store_relaxed(std::uint64_t* word, std::uint64_t v) const {
    std::atomic_ref<std::uint64_t>(*word).store(v, std::memory_order_relaxed);
  }
  // backend.h: a host world's launch boundary is only a barrier of the rank's threads, which
  // orders nothing for a peer, so the store releases what the earlier launches did.
  void store_after_launches(Flag* word, Flag value) const { store_release(word, value); }

  bool wait_at_least(const Flag* word, Flag value) const {
    return poll([&] { return load_acquire(word) >= value; }, word, value);
  }

  // The device's packet contract (device_backend.cuh): one 16-byte atomic access each way, so
  // payload and flag never tear. Release/acquire stands for the one order a GPU gives a
  // packet beyond itself: its payload's value comes from the stager's loads, so those loads
  // were performed before the store could be, and a consumer that saw the packet may then
  // overwrite what they read (an in-place call's output over its input). The engine relies on
  // nothing else a packet could publish. (libatomic: x86-64 has no plain 16-byte atomic store.)
  void put_packet(Packet* packet, std::uint64_t payload, Flag flag) const {
    std::atomic_ref<Packet>(*packet).store(Packet{payload, flag}, std::memory_order_release);
  }
  Packet load_packet(const Packet* packet) const {
    return std::atomic_ref<Packet>(*const_cast<Packet*>(packet)).load(std::memory_order_acquire);
  }
  bool try_packet(const Packet* packet, Flag flag, std::uint64_t& payload) const {
    const Packet seen = load_packet(packet);
    payload = seen.payload;
    return seen.flag >= flag;
  }

  // Call fingerprints (fingerprint.h). A mismatch aborts the world, so every other wait of
  // every rank ends too, with a report naming both calls.
  void watch(const FingerprintWatch& w) const { watch_ = w; }
  bool mismatch(int peer, std::uint64_t theirs) const;
  bool mismatched() const { return mismatched_; }

  // Calls done() until it returns true, pacing like wait_at_least; `word` and `want` name the
  // wait in a timeout report.
  template <class Done>
  bool poll(Done&& done, const Flag* word, Flag want) const {
    Pacer pacer(*this, word, want);
    while (!done()) {
      if (!pacer.keep_going()) return false;
    }
    return true;
  }

  const void** source_table() const { return table_.data(); }
  // Host worlds are profiled with host tools; the timeline is the GPU's (trace.h).
  void mark(TracePoint, Epoch, std::uint64_t) const {}

  void copy(void* dst, const void* src, std::size_t bytes) const {
    Atom::copy(dst, src, bytes, nullptr);
  }
  template <class E, class Op>
  void reduce(void* dst, const void* const* sources, int n, std::size_t bytes, OpArg<E> arg) const {
    Atom::template reduce<E, Op>(dst, sources, n, bytes, nullptr, arg);
  }

 private:
  // Spin briefly (the common case: the producer is running), yield for a while, then sleep in
  // short naps: host worlds run several times more threads than cores, and a waiter that
  // keeps yielding still takes a core (and a syscall) from the thread it waits for. Past the
  // control's timeout it aborts the world with a report naming the word.
  class Pacer {
   public:
    Pacer(const HostBackend& be, const Flag* word, Flag want) : be_(be), word_(word), want_(want) {}
    bool keep_going();

   private:
    const HostBackend& be_;
    const Flag* word_;
    Flag want_;
    int spins_ = 0;
    std::uint64_t round_ = 0;
    std::chrono::steady_clock::time_point deadline_{};
  };

  // A peer of the watched launch that runs another call, or -1.
  int find_mismatch(std::uint64_t& theirs) const;

  HostControl* control_;
  const Handle* handle_;  // this rank's: its timeout report names the word it waited for
  int worker_;
  mutable std::vector<const void*> table_;
  mutable FingerprintWatch watch_{};
  mutable bool mismatched_ = false;
};

static_assert(Backend<HostBackend>);

}  // namespace purlin::snac
