// Point-to-point on SNAC: a rank's grouped sends and receives (ncclSend / ncclRecv inside one
// ncclGroupStart/End) as one launch. The relation is a pair of ranks, not the communicator:
// the sender stages a chunk in its own memory and notifies the receiver, the receiver consumes
// it (pulls it out of the sender's staging) and acknowledges. Only the two ranks of a pair take
// part, so coordination counts per ordered pair (sender, receiver), never communicator-wide: a
// rank that calls nothing blocks nobody, and a pair's transfers keep their order across launches
// as NCCL guarantees.
//
// Memory (PairHandle), separate from the collectives' (handle.h), so that a pair's traffic never
// meets a collective's epoch or staging half:
//   staging   per sender, a ring of `slots` chunks for each receiver (peer-visible)
//   signals   per rank, 64-bit words (PairSignalLayout): ready and bytes written by a sender
//             into the receiver's words, acks written by the receiver into the sender's
//   packets   per receiver, `packet_slots` slots of packets for each sender (peer-visible)
//   sequences rank-local: per worker slot, per peer and counter (PairCounter), the chunks that
//             pair has moved in earlier launches (every worker slot holds the same values)
//
// Transfers up to PairHandle::packet_chunk_bytes travel as packets instead (one crossing, no
// staging copy): the sender pushes 16-byte packets {8 payload bytes, flag} into its area of the
// receiver's packet slot, the flag carrying the pair's packet sequence number and the byte count;
// the receiver polls them, stores the payloads and acknowledges the slot. Packet chunks count
// their own sequence, since they have their own slots.
//
// Chunk q of a pair (its sequence number, counted over the pair's whole life) uses slot
// q mod slots. The sender waits until the receiver acknowledged q - slots, copies the chunk into
// the slot and releases ready = q + 1; the receiver waits for ready >= q + 1, copies the chunk
// out and releases ack = q + 1. Each word only grows. A chunk also carries the byte count of the
// send it belongs to (the bytes word, written before ready), so a receive whose count differs
// from the matching send's fails as a mismatch instead of misaligning every later transfer.
//
// Why it cannot deadlock (every worker of every launch co-resident, as for collectives): every half
// of a transfer (a send on one rank, its receive on the other) has the key (round, sender, position
// in the pair, chunk), where round = (receiver - sender) mod ranks; both ranks compute the same key
// for the same chunk, make_pair_launch (pair_launch.h) sorts a rank's transfers by it, and each
// worker takes its chunks in increasing key. Consider the unfinished half with the least key: its
// worker finished everything before it; a send waits only for the ack of an earlier chunk of the
// same pair, a receive only for the send half of the same chunk, whose own wait is on an earlier
// chunk. So the least one always proceeds. Self transfers (a send to and a receive from this rank
// in one group) are local copies that wait for nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/host_device.h"
#include "snac/backend.h"
#include "snac/handle.h"
#include "snac/packets.h"
#include "snac/plan.h"

namespace purlin::snac {

// Words of one rank's pair signal array.
struct PairSignalLayout {
  int ranks = 1;
  std::uint32_t slots = 1;
  std::uint32_t packet_slots = 0;

  // Receiver's words, written by sender `src`: 1 + the sequence number of the chunk in `slot`.
  PURLIN_HD constexpr std::size_t ready(int src, std::uint64_t slot) const {
    return static_cast<std::size_t>(src) * slots + slot;
  }
  // Receiver's words, written by `src` before ready: the bytes of the send the chunk belongs to.
  PURLIN_HD constexpr std::size_t bytes(int src, std::uint64_t slot) const {
    return (static_cast<std::size_t>(ranks) + src) * slots + slot;
  }
  // Sender's words, written by receiver `dst`: 1 + the sequence number it consumed from `slot`.
  PURLIN_HD constexpr std::size_t ack(int dst, std::uint64_t slot) const {
    return (static_cast<std::size_t>(2) * ranks + dst) * slots + slot;
  }
  // Sender's words, written by receiver `dst`: 1 + the packet sequence number it consumed from
  // packet slot `slot`.
  PURLIN_HD constexpr std::size_t packet_ack(int dst, std::uint64_t slot) const {
    return static_cast<std::size_t>(3) * ranks * slots + static_cast<std::size_t>(dst) * packet_slots + slot;
  }
  PURLIN_HD constexpr std::size_t words() const {
    return static_cast<std::size_t>(3) * ranks * slots + static_cast<std::size_t>(ranks) * packet_slots;
  }
};

// Packets of one rank's pair packet buffer: (sender, slot, packet).
struct PairPacketLayout {
  int ranks = 1;
  std::uint32_t slots = 0;
  std::size_t per_slot = 0;  // packets of one slot

  PURLIN_HD constexpr std::size_t index(int src, std::uint64_t slot, std::size_t packet) const {
    return (static_cast<std::size_t>(src) * slots + slot) * per_slot + packet;
  }
  PURLIN_HD constexpr std::size_t packets() const { return static_cast<std::size_t>(ranks) * slots * per_slot; }
};

// A packet's flag: the chunk's packet sequence number + 1 above the transfer's byte count, so
// that it grows with the sequence and a receive of another count is seen in the first packet.
inline constexpr int kPairPacketBytesBits = 32;
PURLIN_HD constexpr Flag pair_packet_flag(std::uint64_t q, std::uint64_t bytes) {
  return ((q + 1) << kPairPacketBytesBits) | bytes;
}

enum class PairDirection : std::uint32_t { send = 0, recv = 1, copy = 2 };

// The counters of a pair: staged chunks and packet chunks each have their own slots and so their
// own sequence, per direction.
enum class PairCounter : std::uint32_t { send = 0, recv = 1, packet_send = 2, packet_recv = 3 };
inline constexpr int kPairCounters = 4;

struct PairHandle {
  int rank = 0;
  int ranks = 1;
  // Peer-visible, indexed by rank, each pointer valid in this rank's address space.
  std::byte* const* staging = nullptr;  // staging_bytes() each
  Flag* const* signals = nullptr;       // PairSignalLayout{ranks, slots}.words() each
  std::size_t chunk_bytes = 0;          // a multiple of 256
  std::uint32_t slots = 1;              // ring slots per (sender, receiver)
  // Small transfers (at most packet_chunk_bytes) travel as packets pushed into the receiver's
  // buffer, written by each sender into its own area: one crossing, no staging copy.
  Packet* const* packets = nullptr;     // packet_layout().packets() each
  std::size_t packet_chunk_bytes = 0;   // a multiple of 8; 0: no packets
  std::uint32_t packet_slots = 0;
  // Rank-local: sequence_slots x ranks x kPairCounters words (sequence()).
  std::uint64_t* sequences = nullptr;
  int sequence_slots = 0;  // the most workers a launch may use

  PURLIN_HD constexpr PairSignalLayout signal_layout() const { return {ranks, slots, packet_slots}; }
  PURLIN_HD constexpr PairPacketLayout packet_layout() const {
    return {ranks, packet_slots, packet_chunk_bytes / kPacketPayload};
  }
  // Whether a send or receive of `bytes` travels as packets (both ranks decide alike from the
  // count they agree on).
  PURLIN_HD constexpr bool packets_for(std::uint64_t bytes) const {
    return packet_slots > 0 && bytes > 0 && bytes <= packet_chunk_bytes;
  }
  PURLIN_HD constexpr std::size_t staging_bytes() const {
    return static_cast<std::size_t>(ranks) * slots * chunk_bytes;
  }
  // Where a sender keeps chunk `slot` for receiver `peer`, from the start of its staging.
  PURLIN_HD constexpr std::size_t slot_offset(int peer, std::uint64_t slot) const {
    return (static_cast<std::size_t>(peer) * slots + slot) * chunk_bytes;
  }
  PURLIN_HD std::uint64_t* sequence(int worker_slot, int peer, PairCounter c) const {
    return sequences + (static_cast<std::size_t>(worker_slot) * ranks + peer) * kPairCounters +
           static_cast<std::size_t>(c);
  }
  PURLIN_HD constexpr std::size_t sequence_words() const {
    return static_cast<std::size_t>(sequence_slots) * ranks * kPairCounters;
  }
};

// One transfer of a launch. send: `src` to `peer`; recv: `dst` from `peer`; copy: `src` to
// `dst` on this rank (a matched send to and receive from itself). Workers first_worker ..
// first_worker + workers - 1 move its chunks, worker first_worker + k the chunks k, k + workers,
// ... (make_pair_launch assigns them).
struct PairOp {
  const void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
  int peer = 0;
  PairDirection direction = PairDirection::send;
  std::uint32_t first_worker = 0;
  std::uint32_t workers = 1;
};

// One rank's launch: its transfers in key order (make_pair_launch) and how many workers run
// them. Passed by value to the kernel, so N bounds a group's transfers per communicator.
template <int N>
struct PairLaunch {
  static constexpr int capacity = N;
  int count = 0;
  int workers = 1;
  PairOp ops[N];
};

// The most transfers of one rank in one group: a send and a receive for each peer of the
// largest native communicator, with room for several to one peer.
inline constexpr int kMaxPairOps = 256;
// Launches of at most this many transfers use the small parameter block.
inline constexpr int kSmallPairOps = 16;

// Chunks a transfer of `bytes` takes (a zero-byte transfer takes none and waits for nothing).
PURLIN_HD constexpr std::uint64_t pair_chunks(std::uint64_t bytes, std::size_t chunk_bytes) {
  return (bytes + chunk_bytes - 1) / chunk_bytes;
}

// Chunks of one transfer: a packet transfer is one.
PURLIN_HD constexpr std::uint64_t op_chunks(const PairHandle& h, const PairOp& o) {
  return o.direction != PairDirection::copy && h.packets_for(o.bytes) ? 1 : pair_chunks(o.bytes, h.chunk_bytes);
}

// One worker's part of a launch: the chunks assigned to it, in key order, then the advance of
// every pair's sequence in the worker slots it owns.
template <class B, int N>
class PairEngine {
 public:
  PURLIN_HD PairEngine(const B& be, const PairHandle& h, const PairLaunch<N>& launch)
      : be_(be), h_(h), l_(launch), sig_(h.signal_layout()) {}

  PURLIN_HD Status run() {
    const int w = be_.worker();
    // Lane b of each lane group works out the sequence numbers of op i0 + b and the group shares
    // them, so a group's loads of its ops' counters are in flight together: one round trip per
    // group_lanes transfers, not one per pair in a row (the loop that loaded them as it went
    // stalled on each before the next).
    constexpr int G = B::group_lanes;
    const int slot = be_.lane() % G;
    std::uint64_t moved = 0;  // chunks, for the trace
    bool traced = false;
    for (int i0 = 0; i0 < l_.count; i0 += G) {
      const Sequences mine = sequences_at(w, i0 + slot);
      const int end = i0 + G < l_.count ? i0 + G : l_.count;
      for (int i = i0; i < end; ++i) {
        const PairOp& o = l_.ops[i];
        const std::uint64_t staged = be_.from_group_lane(mine.staged, i - i0);
        const std::uint64_t packets = be_.from_group_lane(mine.packets, i - i0);
        if (!traced && o.direction != PairDirection::copy) {
          traced = true;
          trace_launch_ = staged + packets;
          be_.mark(TracePoint::item, trace_launch_, 0);
        }
        if (static_cast<std::uint32_t>(w) < o.first_worker || static_cast<std::uint32_t>(w) >= o.first_worker + o.workers) {
          continue;
        }
        const bool send = o.direction == PairDirection::send;
        const bool as_packets = o.direction != PairDirection::copy && h_.packets_for(o.bytes);
        const std::uint64_t chunks = op_chunks(h_, o);
        for (std::uint64_t j = static_cast<std::uint64_t>(w) - o.first_worker; j < chunks; j += o.workers) {
          const Status s = as_packets ? (send ? push(o, packets) : poll(o, packets)) : move(o, j, staged + j);
          if (s != Status::ok) return s;
          ++moved;
        }
      }
    }
    be_.mark(TracePoint::worked, trace_launch_, 0);
    be_.mark(TracePoint::group, trace_launch_, moved);
    // Every lane's loads of this worker's slot before any lane's stores into it.
    be_.sync();
    for (int i = be_.lane(); i < l_.count; i += be_.lanes()) {
      const PairOp& o = l_.ops[i];
      if (o.direction == PairDirection::copy || (i + 1 < l_.count && same_pair(l_.ops[i + 1], o))) continue;
      Sequences after = sequences_at(w, i);
      after.count(h_, o);
      advance(w, o, counter(o, false), after.staged);
      advance(w, o, counter(o, true), after.packets);
    }
    be_.mark(TracePoint::exit, trace_launch_, 0);
    return Status::ok;
  }

  // A pair's next staged and packet sequence numbers.
  struct Sequences {
    std::uint64_t staged = 0;
    std::uint64_t packets = 0;
    // Past op o's chunks, on the sequence they travel by.
    PURLIN_HD void count(const PairHandle& h, const PairOp& o) {
      (h.packets_for(o.bytes) ? packets : staged) += op_chunks(h, o);
    }
  };

  // The rank-local counter of a send or receive's staged or packet sequence.
  PURLIN_HD static PairCounter counter(const PairOp& o, bool packets) {
    const bool send = o.direction == PairDirection::send;
    if (packets) return send ? PairCounter::packet_send : PairCounter::packet_recv;
    return send ? PairCounter::send : PairCounter::recv;
  }

  // Where op i's chunks start in its pair's sequences: the worker slot's counters (what earlier
  // launches moved) plus the chunks of the pair's ops before i in this launch (a pair's ops
  // are adjacent: make_pair_launch sorts by a key unique to the pair). Zero for a copy or past
  // the last op.
  PURLIN_HD Sequences sequences_at(int w, int i) const {
    Sequences at{};
    if (i >= l_.count || l_.ops[i].direction == PairDirection::copy) return at;
    const PairOp& o = l_.ops[i];
    int first = i;
    while (first > 0 && same_pair(l_.ops[first - 1], o)) --first;
    at.staged = *h_.sequence(w, o.peer, counter(o, false));
    at.packets = *h_.sequence(w, o.peer, counter(o, true));
    for (int j = first; j < i; ++j) at.count(h_, l_.ops[j]);
    return at;
  }

  PURLIN_HD static bool same_pair(const PairOp& a, const PairOp& b) {
    return a.peer == b.peer && a.direction == b.direction;
  }

  // The pair's sequence after this launch, into every worker slot this worker owns (its own and
  // those no worker of this launch reads), by the one lane that computed it, once everything
  // above it is done.
  PURLIN_HD void advance(int w, const PairOp& o, PairCounter c, std::uint64_t next) const {
    for (int s = w; s < h_.sequence_slots; s += l_.workers) *h_.sequence(s, o.peer, c) = next;
  }

  // A packet transfer (packet sequence number q): every thread pushes its packets, payload and
  // flag in one store, into this rank's area of the receiver's packet slot q mod packet_slots,
  // once the receiver has consumed what the slot held before.
  PURLIN_HD Status push(const PairOp& o, std::uint64_t q) const {
    const std::uint64_t slot = q % h_.packet_slots;
    const int me = h_.rank;
    const bool ok = !be_.leader() || q < h_.packet_slots ||
                    be_.wait_at_least(h_.signals[me] + sig_.packet_ack(o.peer, slot), q - h_.packet_slots + 1);
    if (!be_.sync_and(ok)) return failed();
    be_.mark(TracePoint::push, trace_launch_, 0);
    const PairPacketLayout pk = h_.packet_layout();
    Packet* out = h_.packets[o.peer] + pk.index(me, slot, 0);
    const auto* src = static_cast<const std::byte*>(o.src);
    const Flag flag = pair_packet_flag(q, o.bytes);
    const std::size_t count = (o.bytes + kPacketPayload - 1) / kPacketPayload;
    for (std::size_t p = static_cast<std::size_t>(be_.lane()); p < count; p += static_cast<std::size_t>(be_.lanes())) {
      const std::size_t off = p * kPacketPayload;
      be_.put_packet(out + p, detail::load_payload(src + off, o.bytes - off), flag);
    }
    return Status::ok;
  }

  // Its receive: every thread waits for its packets (loads of a batch issued together), stores
  // their payloads, then the worker acknowledges the slot to the sender.
  PURLIN_HD Status poll(const PairOp& o, std::uint64_t q) const {
    const std::uint64_t slot = q % h_.packet_slots;
    const int me = h_.rank;
    const PairPacketLayout pk = h_.packet_layout();
    const Packet* in = h_.packets[me] + pk.index(o.peer, slot, 0);
    auto* dst = static_cast<std::byte*>(o.dst);
    const Flag want = pair_packet_flag(q, 0);
    const Flag exact = pair_packet_flag(q, o.bytes);
    const std::size_t count = (o.bytes + kPacketPayload - 1) / kPacketPayload;
    const auto lanes = static_cast<std::size_t>(be_.lanes());
    // Every thread first sees packet 0, which every transfer has: a sender of another count is
    // then known to all of them, and none waits for a packet that was never sent. Its first
    // batch is loaded beside packet 0 (only looked at after it), so a receiver whose packets
    // have all landed takes one round trip, not two.
    Packet got[detail::kPacketBatch];
    const int m0 = load_batch(in, static_cast<std::size_t>(be_.lane()), count, got);
    Packet first = be_.load_packet(in);
    bool ok = first.flag >= want || be_.poll(
                                        [&] {
                                          first = be_.load_packet(in);
                                          return first.flag >= want;
                                        },
                                        &in->flag, want);
    Flag theirs = exact;
    if (ok && first.flag != exact) {
      theirs = first.flag;
      ok = false;
    }
    for (std::size_t p0 = static_cast<std::size_t>(be_.lane()); ok && p0 < count; p0 += lanes * detail::kPacketBatch) {
      const int m = p0 == static_cast<std::size_t>(be_.lane()) ? m0 : load_batch(in, p0, count, got);
      for (int b = 0; b < m && ok; ++b) {
        const Packet* at = in + p0 + b * lanes;
        ok = got[b].flag >= want || be_.poll(
                                        [&] {
                                          got[b] = be_.load_packet(at);
                                          return got[b].flag >= want;
                                        },
                                        &at->flag, want);
        if (ok && got[b].flag != exact) {
          theirs = got[b].flag;
          ok = false;
        }
      }
      for (int b = 0; b < m && ok; ++b) {
        const std::size_t off = (p0 + b * lanes) * kPacketPayload;
        detail::store_payload(dst + off, got[b].payload, o.bytes - off);
      }
    }
    if (!ok && theirs != exact) ok = be_.mismatch(o.peer, theirs & ((Flag{1} << kPairPacketBytesBits) - 1));
    if (!be_.sync_and(ok)) return failed();
    be_.mark(TracePoint::ready, trace_launch_, 0);
    if (be_.leader()) be_.store_release(h_.signals[o.peer] + sig_.packet_ack(me, slot), q + 1);
    return Status::ok;
  }

  // Loads of packets p0, p0 + lanes, ... (at most a batch, below `count`), issued together.
  PURLIN_HD int load_batch(const Packet* in, std::size_t p0, std::size_t count, Packet* got) const {
    const auto lanes = static_cast<std::size_t>(be_.lanes());
    int m = 0;
    for (; m < detail::kPacketBatch && p0 + m * lanes < count; ++m) got[m] = be_.load_packet(in + p0 + m * lanes);
    return m;
  }

  PURLIN_HD Status move(const PairOp& o, std::uint64_t j, std::uint64_t q) const {
    const std::uint64_t offset = j * h_.chunk_bytes;
    const std::size_t bytes = static_cast<std::size_t>(
        o.bytes - offset < h_.chunk_bytes ? o.bytes - offset : h_.chunk_bytes);
    switch (o.direction) {
      case PairDirection::copy:
        be_.copy(static_cast<std::byte*>(o.dst) + offset, static_cast<const std::byte*>(o.src) + offset,
                 bytes);
        be_.sync();
        return Status::ok;
      case PairDirection::send:
        return send(o, offset, bytes, q);
      case PairDirection::recv:
        return recv(o, offset, bytes, q);
    }
    return Status::bad_argument;
  }

  PURLIN_HD Status send(const PairOp& o, std::uint64_t offset, std::size_t bytes, std::uint64_t q) const {
    const std::uint64_t slot = q % h_.slots;
    const int me = h_.rank;
    // The slot's previous chunk, q - slots, must have been consumed.
    const bool ok = !be_.leader() || q < h_.slots ||
                    be_.wait_at_least(h_.signals[me] + sig_.ack(o.peer, slot), q - h_.slots + 1);
    if (!be_.sync_and(ok)) return failed();
    be_.copy(h_.staging[me] + h_.slot_offset(o.peer, slot), static_cast<const std::byte*>(o.src) + offset,
             bytes);
    be_.sync();
    if (be_.leader()) {
      be_.store_relaxed(h_.signals[o.peer] + sig_.bytes(me, slot), o.bytes);
      be_.store_release(h_.signals[o.peer] + sig_.ready(me, slot), q + 1);
    }
    return Status::ok;
  }

  PURLIN_HD Status recv(const PairOp& o, std::uint64_t offset, std::size_t bytes, std::uint64_t q) const {
    const std::uint64_t slot = q % h_.slots;
    const int me = h_.rank;
    bool ok = true;
    if (be_.leader()) {
      ok = be_.wait_at_least(h_.signals[me] + sig_.ready(o.peer, slot), q + 1);
      if (ok) {
        const Flag theirs = be_.load_acquire(h_.signals[me] + sig_.bytes(o.peer, slot));
        if (theirs != o.bytes) ok = be_.mismatch(o.peer, theirs);
      }
    }
    if (!be_.sync_and(ok)) return failed();
    be_.copy(static_cast<std::byte*>(o.dst) + offset, h_.staging[o.peer] + h_.slot_offset(me, slot), bytes);
    be_.sync();
    if (be_.leader()) be_.store_release(h_.signals[o.peer] + sig_.ack(me, slot), q + 1);
    return Status::ok;
  }

  PURLIN_HD Status failed() const { return be_.mismatched() ? Status::mismatch : Status::aborted; }

  const B& be_;
  const PairHandle& h_;
  const PairLaunch<N>& l_;
  PairSignalLayout sig_;
  // The trace's launch number (trace.h): the first transfer's pair sequence at launch start,
  // the same in every worker of the launch and, where every pair moves alike (an AllToAll), on
  // every rank. Pair launches and collectives share the trace: trace one kind at a time.
  Epoch trace_launch_ = 0;
};

template <class B, int N>
  requires Backend<B>
PURLIN_HD Status run_pairs(const B& be, const PairHandle& h, const PairLaunch<N>& launch) {
  return PairEngine<B, N>(be, h, launch).run();
}

}  // namespace purlin::snac
