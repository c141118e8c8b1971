// Flag, epoch and staging-slot arithmetic of the SNAC protocol (DESIGN §2). Plain values only;
// SNAC owns the memory, the release stores and the acquire polls.
//
// Encoding. An epoch is a 64-bit counter kept on the device per CTA slot. A launch that uses
// `ordinals` chunk ordinals (0 .. ordinals-1) at epoch e publishes chunk c with
//
//     flag_value(e, c) = e + c + 1            and ends at   next_epoch(e) = e + (ordinals | 1)
//
// so every flag of a launch lies in (e, next_epoch(e)] and every flag of the next launch is
// larger than every flag of this one. Nothing is ever reset: a consumer waits for
// `flag >= flag_value(e, c)`, and stale values from older launches are always smaller. The + 1
// keeps every flag above the zero that fresh flag memory holds, even at epoch 0.
//
// The advance `ordinals | 1` is the smallest odd number >= the ordinals used, so the epoch's
// parity flips every launch and selects the staging half; consecutive launches stage into
// different halves with no host synchronization, and a replayed CUDA graph keeps alternating.
// All ranks must advance by the same amount (chunking.h: launch_chunks), because a consumer
// computes the flag it waits for from its own epoch.
//
// Overflow horizon: the epoch grows by at most ordinals + 1 per launch, so it wraps after 2^64
// chunk ordinals in total (counting one extra per launch): about 584 years at 10^9 ordinals per
// second, far above what any chunk size lets a GPU publish. Wrapping is therefore not handled.
//
// A flag word must only ever receive increasing values. One word per staging slot, shared by
// both halves, has that property (as does one per in-order publisher): a slot is refilled only
// after its previous chunk was published and drained, and launches publish in epoch order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/host_device.h"

namespace purlin::layout {

using Epoch = std::uint64_t;
using Flag = std::uint64_t;

static_assert(~std::uint64_t{0} / (1'000'000'000ull * 3600 * 24 * 365) >= 500,
              "flag horizon: 2^64 ordinals must outlast centuries at 1e9 ordinals/s");

PURLIN_HD constexpr std::uint64_t epoch_advance(std::uint64_t ordinals) { return ordinals | 1u; }

PURLIN_HD constexpr Epoch next_epoch(Epoch epoch, std::uint64_t ordinals) {
  return epoch + epoch_advance(ordinals);
}

// Precondition: ordinal < the launch's ordinals.
PURLIN_HD constexpr Flag flag_value(Epoch epoch, std::uint64_t ordinal) {
  return epoch + ordinal + 1;
}

// The wait condition, spelled once: flags are monotonic, so >= also accepts a later launch's
// value, which implies this launch's chunk was published long ago.
PURLIN_HD constexpr bool flag_reached(Flag observed, Flag expected) {
  return observed >= expected;
}

// Staging half (0 or 1) a launch at `epoch` stages into.
PURLIN_HD constexpr unsigned staging_half(Epoch epoch) { return static_cast<unsigned>(epoch & 1u); }

// Latency regime: the 8-byte flag half of a {payload, flag} packet. Each packet slot is written
// once per launch, so one value per launch suffices; packets left in the same half by the launch
// two back carry smaller values.
PURLIN_HD constexpr Flag packet_flag(Epoch epoch) { return flag_value(epoch, 0); }

// Each staging half is a ring of `slots` slots of `slot_bytes` (one chunk stride). A payload
// with more chunk ordinals than slots goes around the ring: ordinal c uses slot c % slots.
//
// The halves sit at fixed offsets (0 and half_stride, the buffer's half), not at
// slots * slot_bytes: consecutive launches may use different rings (another collective or
// chunk size), and a half placed by one launch's ring could overlap the other half that slow
// peers of the previous launch are still reading.
struct StagingRing {
  std::size_t slot_bytes = 0;
  std::uint64_t slots = 0;
  std::size_t half_stride = 0;  // bytes of one half of the staging buffer

  // Slots that fit in one half of a staging buffer. slots == 0 (a chunk larger than the half)
  // is not a usable ring; the policy must pick a smaller chunk.
  PURLIN_HD static constexpr StagingRing fit(std::size_t half_bytes, std::size_t slot_bytes) {
    return {slot_bytes, slot_bytes == 0 ? 0 : half_bytes / slot_bytes, half_bytes};
  }

  PURLIN_HD constexpr bool usable() const { return slots != 0 && slot_bytes != 0; }
  // Bytes of a half the ring's slots occupy.
  PURLIN_HD constexpr std::size_t half_bytes() const {
    return static_cast<std::size_t>(slots) * slot_bytes;
  }
  PURLIN_HD constexpr std::uint64_t slot(std::uint64_t ordinal) const { return ordinal % slots; }
  // How many times the ring has wrapped before this ordinal; 0 means first use in this launch.
  PURLIN_HD constexpr std::uint64_t lap(std::uint64_t ordinal) const { return ordinal / slots; }
  // Byte offset of ordinal's slot from the start of the two-half staging buffer.
  PURLIN_HD constexpr std::size_t offset(Epoch epoch, std::uint64_t ordinal) const {
    return staging_half(epoch) * half_stride +
           static_cast<std::size_t>(slot(ordinal)) * slot_bytes;
  }
};

// Drain acknowledgments: when a producer may overwrite a staging slot.
//
// Ack words are per (producer, consumer, half, slot) and live with the producer; they reuse the
// flag encoding. Initial state: epochs 0 and every flag and ack word zeroed, so the first launch
// (epoch 0, half 0) finds its slots released. Two events raise acks, both release stores by the
// consumer:
//
//  1. After draining ordinal c of the launch at epoch e, the consumer stores
//     drain_ack_value(e, c) into the ack word of that slot in half staging_half(e).
//  2. In every launch, before or while doing anything else, every rank stores
//     drain_release_value(e, ordinals) into all of its ack words at every peer for the *other*
//     half. Being inside launch e proves the rank finished the previous launch on that half
//     (stream order), so that half's slots are free; the value equals the epoch of the next
//     launch, which is the one that will fill that half. It costs no wait, so it cannot deadlock.
//
// The producer at epoch e waits, before staging ordinal c into slot s, until
// ack >= drain_wait_value(e, c, slots) for:
//  - a first use (c < slots): every peer's ack word; the value is the release written one launch
//    ago. Who read the slot two launches back is unknown, and releases are unconditional, so
//    this wait is cheap and cannot block on a peer that reads nothing now.
//  - a reuse (c >= slots): only the readers of ordinal c - slots (Collective::notifies); the value
//    is their ack of that ordinal. Waiting on a non-reader would deadlock: it never acks here,
//    and may be blocked on a later chunk of ours.
// A consumer that reads nothing more from this producer may finish the launch and publish its
// next release while the producer is still staging into that half. The release then satisfies
// any wait on that consumer's words, which is harmless: it has drained everything it read.
//
// Values in one ack word only grow: a half's acks of launch e stay <= next_epoch(e), below the
// release written one launch later (next_epoch of that later launch), and the acks of the launch
// after that exceed it in turn. Acks must be per half: a single word for both halves would
// receive this launch's release (next_epoch(e)) and then this launch's smaller acks.
PURLIN_HD constexpr Flag drain_ack_value(Epoch epoch, std::uint64_t ordinal) {
  return flag_value(epoch, ordinal);
}

PURLIN_HD constexpr Flag drain_release_value(Epoch epoch, std::uint64_t ordinals) {
  return next_epoch(epoch, ordinals);
}

PURLIN_HD constexpr Flag drain_wait_value(Epoch epoch, std::uint64_t ordinal,
                                          std::uint64_t slots) {
  return ordinal < slots ? epoch : drain_ack_value(epoch, ordinal - slots);
}

}  // namespace purlin::layout
