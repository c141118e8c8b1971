// The plain-data view of one rank's communicator that SNAC runs against: pointers and sizes only,
// passed by value to a kernel (or to a host worker thread). Whoever owns the memory fills it:
// snac::HostWorld for CPU threads, the GPU runtime (src/runtime) with IPC-mapped peer pointers.
//
// Peer-visible memory (every rank maps every rank's):
//   staging   two halves (epoch parity) of a ring of chunk slots; producers write their own,
//             consumers pull from it
//   signals   64-bit words: flags and input addresses (written by producers into the
//             consumer's words), drain acks and half releases (written by consumers into the
//             producer's words)
//   packets   latency-regime buffers, written by producers into the consumer's buffer
// Rank-local memory:
//   epochs    one per worker (CTA) slot, persistent across launches
//   counters  team arrival counters (last CTA of a chunk publishes)
//   scratch   latency-regime unpack area for reductions and composition intermediates
//
// Initial state the owner must provide: every signal, counter and epoch word zero. Packets may
// hold anything whose flag half is zero. Nothing is ever reset afterwards.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/flags.h"
#include "layout/host_device.h"

namespace purlin::snac {

using layout::Epoch;
using layout::Flag;

// Latency-regime unit: one 16-byte store carries 8 payload bytes and the flag that says they
// arrived (layout::packet_flag of the launch's epoch).
struct alignas(16) Packet {
  std::uint64_t payload;
  std::uint64_t flag;
};
inline constexpr std::size_t kPacketPayload = sizeof(std::uint64_t);

// A composition has two phases (F, G); single-phase collectives use phase 0 only. Sizing the
// words for two keeps one geometry for every collective a communicator runs.
inline constexpr int kMaxPhases = 2;

// Word indices into one rank's signal array. A flag word belongs to (phase, producer, slot):
// a consumer reads at most one partition per producer and phase (collective.h: source), and a
// slot carries increasing ordinals (flags.h), so each word only ever grows. Acks are per half
// as flags.h requires; the release of a half is one word per (consumer, half) rather than a
// store into every ack word: the first use of any slot waits for it, so the cost of a launch's
// releases is O(ranks) instead of O(ranks x slots), with the same values and the same wait.
struct SignalLayout {
  int ranks = 1;
  std::uint32_t slots = 1;  // slot capacity; a launch uses at most this many ring slots

  PURLIN_HD constexpr std::size_t flag(int phase, int producer, std::uint64_t slot) const {
    return (static_cast<std::size_t>(phase) * ranks + producer) * slots + slot;
  }
  PURLIN_HD constexpr std::size_t ack(int phase, int consumer, unsigned half,
                                      std::uint64_t slot) const {
    const std::size_t base = static_cast<std::size_t>(kMaxPhases) * ranks * slots;
    return base + ((static_cast<std::size_t>(phase) * ranks + consumer) * 2 + half) * slots + slot;
  }
  PURLIN_HD constexpr std::size_t release(int consumer, unsigned half) const {
    const std::size_t base = static_cast<std::size_t>(kMaxPhases) * ranks * slots * 3;
    return base + static_cast<std::size_t>(consumer) * 2 + half;
  }
  // Where a producer's first-phase chunks live for this consumer, per half: the address of
  // the input partition the consumer reads, when the producer lets consumers read its input
  // directly (zero-copy, engine.h), or 0 when they are in its staging. Written before the
  // flags that publish them and guarded by the same half releases.
  PURLIN_HD constexpr std::size_t input_address(int producer, unsigned half) const {
    return release(ranks, 0) + static_cast<std::size_t>(producer) * 2 + half;
  }
  PURLIN_HD constexpr std::size_t words() const { return input_address(ranks, 0); }
};

// Packet index in a consumer's buffer: (phase, half, producer, packet).
struct PacketLayout {
  int ranks = 1;
  std::size_t capacity = 0;  // packets per (phase, half, producer)

  PURLIN_HD constexpr std::size_t index(int phase, unsigned half, int producer,
                                        std::size_t packet) const {
    return ((static_cast<std::size_t>(phase) * 2 + half) * ranks + producer) * capacity + packet;
  }
  // After the data packets: one fingerprint packet per (half, producer) (fingerprint.h). Kept
  // even without a latency regime (capacity 0): every launch checks its call against its peers'.
  PURLIN_HD constexpr std::size_t fingerprint(unsigned half, int producer) const {
    return index(kMaxPhases, 0, 0, 0) + static_cast<std::size_t>(half) * ranks + producer;
  }
  PURLIN_HD constexpr std::size_t packets() const { return fingerprint(2, 0); }
  // Largest partition (bytes) one producer can push to one consumer.
  PURLIN_HD constexpr std::size_t max_bytes() const { return capacity * kPacketPayload; }
  // Latency scratch: one unpack area per producer plus the intermediate of a composition.
  PURLIN_HD constexpr std::size_t scratch_bytes() const {
    return (static_cast<std::size_t>(ranks) + 1) * max_bytes();
  }
};

// Arrival counters, rank-local: (kind, phase, partition, slot). Stagers count per input
// partition, consumers per output region.
enum class CounterKind : std::uint8_t { stage = 0, consume = 1 };
struct CounterLayout {
  int ranks = 1;
  std::uint32_t slots = 1;

  PURLIN_HD constexpr std::size_t index(CounterKind kind, int phase, int partition,
                                        std::uint64_t slot) const {
    return ((static_cast<std::size_t>(kind) * kMaxPhases + phase) * ranks + partition) * slots +
           slot;
  }
  PURLIN_HD constexpr std::size_t words() const {
    return static_cast<std::size_t>(2) * kMaxPhases * ranks * slots;
  }
};

struct Handle {
  int rank = 0;
  int ranks = 1;

  // Peer-visible, indexed by rank, each pointer valid in this rank's address space.
  std::byte* const* staging = nullptr;  // staging_bytes each: two halves
  Flag* const* signals = nullptr;       // SignalLayout{ranks, slots}.words() each
  Packet* const* packets = nullptr;     // PacketLayout{ranks, packet_capacity}.packets() each
  std::size_t staging_bytes = 0;
  std::uint32_t slots = 1;          // slot capacity of the signal and counter arrays
  std::size_t packet_capacity = 0;  // 0: no latency regime
  // Every rank's application buffers are addressable by every rank with the same pointer
  // (threads of one process on one GPU, or host threads), so consumers may read a producer's
  // input instead of its staging (zero-copy). Other processes would need the buffers
  // registered and mapped.
  bool inputs_peer_visible = false;

  // Rank-local.
  Epoch* epochs = nullptr;            // epoch_slots words
  int epoch_slots = 0;                // the most workers (CTAs) a launch may use
  std::uint64_t* counters = nullptr;  // CounterLayout{ranks, slots}.words()
  std::byte* scratch = nullptr;       // PacketLayout{ranks, packet_capacity}.scratch_bytes()

  PURLIN_HD constexpr SignalLayout signal_layout() const { return {ranks, slots}; }
  PURLIN_HD constexpr PacketLayout packet_layout() const { return {ranks, packet_capacity}; }
  PURLIN_HD constexpr CounterLayout counter_layout() const { return {ranks, slots}; }
};

// The first wait of a rank that gave up, for the failure's report (signal_names.h names the
// word): a hang across ranks is diagnosed by who waited for whom. Written once, like the
// status word: the first waiter to claim it fills it, then sets `filled`.
// It also says which CTAs of the waiter's launch had started (DeviceControl::started): a CTA
// that never became resident starves its peers exactly like a protocol bug would.
struct StallRecord {
  unsigned claimed = 0;
  unsigned filled = 0;
  unsigned worker = 0;     // the waiting CTA
  unsigned timed_out = 0;  // 1: its deadline passed; 0: the abort word was set
  std::uint64_t word = 0;  // address of the polled word (a packet's flag half for a packet)
  std::uint64_t want = 0;  // the value waited for
  std::uint64_t seen = 0;  // the value the word held when the wait gave up
  unsigned workers = 0;    // CTAs of the launch
  unsigned started = 0;    // of which had started
  std::uint64_t missing = 0;  // bit w: CTA w (w < 64) had not started
  // A call mismatch (fingerprint.h) instead of a stall: peer's call differs from this rank's.
  unsigned mismatch = 0;
  int peer = -1;
  std::uint64_t own = 0;     // this rank's fingerprint
  std::uint64_t theirs = 0;  // the peer's
};

// What the runtime gives a launch besides the handle: a way out and a place for the verdict.
// Plain data, passed by value to the kernel.
struct DeviceControl {
  const volatile unsigned* abort = nullptr;  // host-mapped; nonzero makes every wait give up
  unsigned* status = nullptr;                // first non-ok Status of any worker (0 = ok); host-mapped
  StallRecord* stall = nullptr;              // host-mapped; null: not recorded
  // Rank-local, one word per CTA slot: 1 + the epoch the CTA's latest launch started at (its
  // first store; 0: never started), which a stall record compares against.
  Epoch* started = nullptr;
  std::uint64_t timeout_ns = 0;              // per wait; 0 waits until aborted
  // A waiting thread checks the abort word and the deadline, then backs off for sleep_ns,
  // once every check_every polls (0 counts as 1). Data, not code, so that polling on a GPU
  // shared by many ranks can be tuned from measurements without a rebuild.
  std::uint32_t check_every = 1024;
  std::uint32_t sleep_ns = 100;
  // Nonzero: also back off for sleep_ns every backoff_every polls between checks, without
  // reading the abort word (polling threads then leave the memory system to the producers).
  std::uint32_t backoff_every = 0;
  // 1: every rank is a thread of this process on this GPU, so flags and acknowledgments need
  // only GPU scope; 0: some peer is another GPU or process, and they take system scope.
  std::uint32_t gpu_scope = 0;
  // Profiling only (trace.h): trace_words(trace_workers) words, or null.
  std::uint64_t* trace = nullptr;
  int trace_workers = 0;
};

}  // namespace purlin::snac
