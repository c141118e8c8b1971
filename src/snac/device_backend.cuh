// The device execution backend: one worker is one CTA (blockIdx.x), its threads are the lanes,
// thread 0 waits and publishes. Flags are system-scope acquire/release (peers are other GPUs
// reached over NVLink, or other processes), GPU-scope where every rank is a thread of this
// process on this GPU; team counters are rank-local, so device scope suffices for them (the
// last arriver's system-scope release is cumulative over what its acquire observed).
//
// Packets cannot tear: put_packet is one 128-bit store and try_packet one 128-bit load of a
// .b128 scalar (PTX ISA 8.3+, sm_70+), relaxed and scoped like the flags. A vector access
// (.v2.u64) would not do: the PTX memory model relates scalar accesses only and models a vector
// one as its elements accessed in an unspecified order, so a poller could see the new flag
// beside the old payload. A .b128 access is one scalar access, relaxed makes it morally strong
// against the peer's, and libcu++ builds cuda::atomic_ref<16-byte>::load/store on exactly these
// instructions. Relaxed suffices: a packet publishes only its own payload, nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <cuda/atomic>

#include "atom/config.h"
#include "snac/backend.h"
#include "snac/datapath.h"
#include "snac/fingerprint.h"
#include "snac/handle.h"
#include "snac/plan.h"
#include "snac/trace.h"

namespace purlin::snac {

// The Atom, called out of line. The engine reaches copy and reduce from several places (stage,
// pull and poll, per phase); inlining the whole pipelined datapath at each of them tripled
// the compile time of a reduction kernel (measured: ~6.5 s per architecture per instance
// inlined), and a kernel library has ~300 of them. One call per chunk share is noise next to
// moving the share.
template <class Atom>
__device__ __noinline__ void atom_copy(void* dst, const void* src, std::size_t bytes,
                                       atom::Workspace workspace) {
  Atom::copy(dst, src, bytes, workspace);
}

template <class Atom, class E, class Op>
__device__ __noinline__ void atom_reduce(void* dst, const void* const* sources, int n,
                                         std::size_t bytes, atom::Workspace workspace, OpArg<E> arg) {
  Atom::template reduce<E, Op>(dst, sources, n, bytes, workspace, arg);
}

__device__ inline std::uint64_t globaltimer() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A worker's call-check state (fingerprint.h), which a wait's mismatch check reads and a
// mismatch writes: kept apart from the backend, in the kernel's local memory, so that the
// backend itself has no address that escapes (its noinline paths take this instead) and its
// fields stay in registers. In memory, every acquire's L1 invalidation (ld.acquire is followed
// by CCTL.IVALL on sm_90) sends each later read of them back to L2: the kernel reread the
// control's gpu_scope that way before every packet access. With the backend in registers and
// the args read in place (kernel.cuh), collectives of 1-64 KiB run 6-11% faster
// (perf/snac/results/h100-h200-20261206-setup, b25 -> b26).
struct DeviceWatch {
  FingerprintWatch watch{};
  bool mismatched = false;
};

// One 128-bit load of a packet, relaxed and scoped like the flags (header comment).
__device__ inline Packet load_packet_scoped(const Packet* packet, std::uint32_t gpu_scope) {
  std::uint64_t data = 0;
  std::uint64_t seen = 0;
  if (gpu_scope != 0) {
    asm volatile(
        "{\n\t.reg .b128 p;\n\tld.relaxed.gpu.global.b128 p, [%2];\n\t"
        "mov.b128 {%0, %1}, p;\n\t}"
        : "=l"(data), "=l"(seen)
        : "l"(packet)
        : "memory");
  } else {
    asm volatile(
        "{\n\t.reg .b128 p;\n\tld.relaxed.sys.global.b128 p, [%2];\n\t"
        "mov.b128 {%0, %1}, p;\n\t}"
        : "=l"(data), "=l"(seen)
        : "l"(packet)
        : "memory");
  }
  return Packet{data, seen};
}

// One 128-bit store of a packet (header comment): payload and flag arrive together or not at
// all.
__device__ inline void store_packet_scoped(Packet* packet, std::uint64_t payload, Flag flag,
                                           std::uint32_t gpu_scope) {
  if (gpu_scope != 0) {
    asm volatile(
        "{\n\t.reg .b128 p;\n\tmov.b128 p, {%1, %2};\n\t"
        "st.relaxed.gpu.global.b128 [%0], p;\n\t}" ::"l"(packet),
        "l"(payload), "l"(flag)
        : "memory");
  } else {
    asm volatile(
        "{\n\t.reg .b128 p;\n\tmov.b128 p, {%1, %2};\n\t"
        "st.relaxed.sys.global.b128 [%0], p;\n\t}" ::"l"(packet),
        "l"(payload), "l"(flag)
        : "memory");
  }
}

// The peer whose fingerprint differs (fingerprint.h: find_mismatch), out of line like the Atom:
// every wait of every kernel reaches it, only once per check_every polls, and inlined at each
// wait it made a reduction kernel file compile 30% longer (95 s against 74 s for sm_90 on this
// project's CI machine).
static __device__ __noinline__ int find_watched_mismatch(const DeviceWatch* w,
                                                         std::uint32_t gpu_scope,
                                                         std::uint64_t* theirs) {
  struct Loads {
    std::uint32_t gpu_scope;
    __device__ Packet load_packet(const Packet* p) const { return load_packet_scoped(p, gpu_scope); }
  };
  return find_mismatch(Loads{gpu_scope}, w->watch, *theirs);
}

// A mismatch recorded for the host's report and written as the launch's status at once: the
// worker's other threads return `aborted`. Out of line, as above. Returns false (the wait's
// verdict).
static __device__ __noinline__ bool record_mismatch(DeviceWatch* w, unsigned* status,
                                                    StallRecord* r, int peer,
                                                    std::uint64_t theirs) {
  w->mismatched = true;
  if (status != nullptr) atomicCAS(status, 0u, static_cast<unsigned>(Status::mismatch));
  if (r == nullptr || atomicCAS(&r->claimed, 0u, 1u) != 0u) return false;
  r->worker = blockIdx.x;
  r->mismatch = 1;
  r->peer = peer;
  r->own = w->watch.own;
  r->theirs = theirs;
  r->want = w->watch.flag;
  __threadfence_system();
  atomicExch(&r->filled, 1u);
  return false;
}

template <class Atom>
class DeviceBackend {
 public:
  __device__ DeviceBackend(atom::Workspace workspace, const void** table, const DeviceControl& control,
                           DeviceWatch& watch)
      : workspace_(workspace), table_(table), control_(control), watch_(&watch) {}

  __device__ int worker() const { return static_cast<int>(blockIdx.x); }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ int lane() const { return static_cast<int>(threadIdx.x); }
  __device__ int lanes() const { return static_cast<int>(blockDim.x); }
  __device__ void sync() const { __syncthreads(); }
  __device__ bool sync_and(bool p) const { return __syncthreads_and(p ? 1 : 0) != 0; }
  static constexpr int group_lanes = 32;  // a warp
  template <class T>
  __device__ T from_group_lane(T v, int from) const {
    static_assert(sizeof(T) == sizeof(unsigned long long) && std::is_trivially_copyable_v<T>);
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof bits);
    bits = __shfl_sync(0xffffffffu, bits, from);
    memcpy(&v, &bits, sizeof bits);
    return v;
  }

  // Flags are acquire/release at system scope (peers on other GPUs or in other processes),
  // or at GPU scope when every rank is a thread of this process on this GPU
  // (DeviceControl::gpu_scope): a system-scope release also orders against the host and
  // peer devices, which nothing here needs then.
  __device__ Flag load_acquire(const Flag* word) const {
    auto* w = const_cast<Flag*>(word);
    if (control_.gpu_scope != 0) {
      return cuda::atomic_ref<Flag, cuda::thread_scope_device>(*w).load(cuda::memory_order_acquire);
    }
    return cuda::atomic_ref<Flag, cuda::thread_scope_system>(*w).load(cuda::memory_order_acquire);
  }
  __device__ void store_release(Flag* word, Flag value) const {
    if (control_.gpu_scope != 0) {
      cuda::atomic_ref<Flag, cuda::thread_scope_device>(*word).store(value, cuda::memory_order_release);
    } else {
      cuda::atomic_ref<Flag, cuda::thread_scope_system>(*word).store(value, cuda::memory_order_release);
    }
  }
  __device__ std::uint64_t fetch_add(std::uint64_t* word, std::uint64_t v) const {
    return cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*word).fetch_add(
        v, cuda::memory_order_acq_rel);
  }
  // System scope unless gpu_scope: besides rank-local counters it writes peer-visible words (a
  // consumer's input_address).
  __device__ void store_relaxed(std::uint64_t* word, std::uint64_t v) const {
    if (control_.gpu_scope != 0) {
      cuda::atomic_ref<std::uint64_t, cuda::thread_scope_device>(*word).store(v, cuda::memory_order_relaxed);
    } else {
      cuda::atomic_ref<std::uint64_t, cuda::thread_scope_system>(*word).store(v, cuda::memory_order_relaxed);
    }
  }

  // backend.h: the kernel boundary before this launch performed every access it vouches for.
  __device__ void store_after_launches(Flag* word, Flag value) const {
    store_relaxed(word, value);
  }

  __device__ bool wait_at_least(const Flag* word, Flag value) const {
    Waiter w(*this);
    while (load_acquire(word) < value) {
      if (!w.keep_going()) {
        note_stall(word, value, load_acquire(word), w.timed_out());
        return false;
      }
    }
    return true;
  }

  __device__ void put_packet(Packet* packet, std::uint64_t payload, Flag flag) const {
    store_packet_scoped(packet, payload, flag, control_.gpu_scope);
  }
  // One 128-bit load of a packet: true when it carries `flag` (or a later launch's); the
  // payload is the one stored with the flag seen.
  __device__ bool try_packet(const Packet* packet, Flag flag, std::uint64_t& payload) const {
    const Packet seen = load_packet(packet);
    payload = seen.payload;
    return seen.flag >= flag;
  }
  __device__ Packet load_packet(const Packet* packet) const {
    return load_packet_scoped(packet, control_.gpu_scope);
  }

  // Call fingerprints (fingerprint.h): the watch and a mismatch live in DeviceWatch.
  __device__ void watch(const FingerprintWatch& w) const { watch_->watch = w; }
  __device__ bool mismatch(int peer, std::uint64_t theirs) const {
    return record_mismatch(watch_, control_.status, control_.stall, peer, theirs);
  }
  __device__ bool mismatched() const { return watch_->mismatched; }

  // Calls done() until it returns true, with the waits' way out; `word` and `want` name what
  // it waits for in a stall report.
  template <class Done>
  __device__ bool poll(Done&& done, const Flag* word, Flag want) const {
    Waiter w(*this);
    while (!done()) {
      if (!w.keep_going()) {
        note_stall(word, want, load_acquire(word), w.timed_out());
        return false;
      }
    }
    return true;
  }

  __device__ const void** source_table() const { return table_; }

  // Trace point (trace.h): the time, or for TracePoint::group the value, by thread 0 only.
  __device__ void mark(TracePoint point, Epoch epoch, std::uint64_t value) const {
    if (control_.trace == nullptr || threadIdx.x != 0) return;
    control_.trace[trace_index(epoch, static_cast<int>(blockIdx.x), control_.trace_workers,
                               point)] = point == TracePoint::group ? value : globaltimer();
  }

  __device__ void copy(void* dst, const void* src, std::size_t bytes) const {
    atom_copy<Atom>(dst, src, bytes, workspace_);
  }
  template <class E, class Op>
  __device__ void reduce(void* dst, const void* const* sources, int n, std::size_t bytes,
                         OpArg<E> arg) const {
    atom_reduce<Atom, E, Op>(dst, sources, n, bytes, workspace_, arg);
  }

 private:
  // The first wait of this rank to give up claims the record; later ones (the waits a peer's
  // stall starved in turn, or every wait after an abort) leave it alone.
  __device__ void note_stall(const void* word, Flag want, Flag seen, bool timed_out) const {
    StallRecord* r = control_.stall;
    if (r == nullptr || atomicCAS(&r->claimed, 0u, 1u) != 0u) return;
    r->worker = blockIdx.x;
    r->timed_out = timed_out ? 1u : 0u;
    r->word = reinterpret_cast<std::uintptr_t>(word);
    r->want = want;
    r->seen = seen;
    if (control_.started != nullptr) {
      const volatile Epoch* started = control_.started;
      const Epoch mine = started[blockIdx.x];
      unsigned count = 0;
      std::uint64_t missing = 0;
      for (unsigned w = 0; w < gridDim.x; ++w) {
        if (started[w] == mine) {
          ++count;
        } else if (w < 64) {
          missing |= std::uint64_t{1} << w;
        }
      }
      r->workers = gridDim.x;
      r->started = count;
      r->missing = missing;
    }
    __threadfence_system();
    atomicExch(&r->filled, 1u);
  }

  __device__ int find_mismatch(std::uint64_t& theirs) const {
    return find_watched_mismatch(watch_, control_.gpu_scope, &theirs);
  }

  // Backoff and the way out of a wait: the abort word and a globaltimer deadline, checked
  // every DeviceControl::check_every polls so that the common, short wait stays a tight loop
  // (counted down: a modulo by a run-time value would cost a division per poll). Measured on
  // one H200 (perf/snac, 8 ranks sharing the GPU): reading the abort word only every 20 us and
  // sleeping only after 10 us of waiting made a 1 KiB AllReduce slower, 25.6 -> 53.7 us per
  // call; the likely reason is that every thread of a latency-regime consumer polls packets,
  // and the short sleeps keep that polling from crowding out the producers' stores. Every
  // check also reads the host-mapped abort word across PCIe, from every polling thread.
  class Waiter {
   public:
    __device__ explicit Waiter(const DeviceBackend& be) : be_(be), c_(be.control_) {}
    __device__ bool keep_going() {
      if (c_.backoff_every != 0 && --backoff_ == 0) {
        backoff_ = static_cast<std::int64_t>(c_.backoff_every);
        __nanosleep(c_.sleep_ns);
      }
      if (--countdown_ > 0) return true;
      countdown_ = static_cast<std::int64_t>(c_.check_every);
      if (c_.abort != nullptr && *c_.abort != 0) return false;
      std::uint64_t theirs = 0;
      if (const int peer = be_.find_mismatch(theirs); peer >= 0) return be_.mismatch(peer, theirs);
      const std::uint64_t now = globaltimer();
      if (start_ == 0) start_ = now;
      if (c_.timeout_ns != 0 && now - start_ > c_.timeout_ns) {
        timed_out_ = true;
        return false;
      }
      if (c_.sleep_ns != 0) __nanosleep(c_.sleep_ns);
      return true;
    }
    __device__ bool timed_out() const { return timed_out_; }

   private:
    const DeviceBackend& be_;
    const DeviceControl& c_;
    std::int64_t countdown_ = c_.check_every;
    std::int64_t backoff_ = c_.backoff_every;
    std::uint64_t start_ = 0;
    bool timed_out_ = false;
  };

  atom::Workspace workspace_;
  const void** table_;
  // A copy, not a reference to the kernel's: read in every flag and packet access, it must not
  // live behind a pointer into local memory (DeviceWatch says why).
  DeviceControl control_;
  DeviceWatch* watch_;
};

}  // namespace purlin::snac
