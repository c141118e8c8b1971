// Where each part of a rank's SNAC memory lives inside its two device allocations. Pure
// arithmetic, identical on every rank because the inputs are agreed (DeviceState checks): a
// peer's staging, signals and packets are found at the same offsets from its block's base.
#pragma once

#include <cstddef>
#include <cstdint>

#include "snac/handle.h"
#include "snac/pairs.h"

namespace purlin::runtime {

// Every sub-buffer starts on 256 bytes, the alignment cudaMalloc guarantees, so each behaves
// like its own allocation for the Atom's vector and bulk-copy paths.
inline constexpr std::size_t kSubBufferAlign = 256;

constexpr std::size_t align_up(std::size_t bytes, std::size_t to = kSubBufferAlign) {
  return (bytes + to - 1) / to * to;
}

// Offsets and sizes, in bytes, of one sub-buffer.
struct Span {
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

// Point-to-point geometry (snac/pairs.h): bytes per chunk and ring slots per pair; a zero
// chunk leaves no room for it.
struct PairGeometry {
  std::size_t chunk_bytes = 0;
  std::uint32_t slots = 0;
  std::size_t packet_bytes = 0;  // payload per packet slot
  std::uint32_t packet_slots = 0;
};

// The peer-visible block: [staging | signals | packets | pair staging | pair signals | pair packets].
struct PeerBlockLayout {
  Span staging{};
  Span signals{};
  Span packets{};
  Span pair_staging{};
  Span pair_signals{};
  Span pair_packets{};
  std::size_t bytes = 0;

  static constexpr PeerBlockLayout make(int ranks, std::size_t staging_bytes,
                                        std::uint32_t slots, std::size_t packet_capacity,
                                        PairGeometry pairs = {}) {
    PeerBlockLayout l;
    l.staging = {0, staging_bytes};
    l.signals = {align_up(l.staging.offset + l.staging.bytes),
                 snac::SignalLayout{ranks, slots}.words() * sizeof(snac::Flag)};
    l.packets = {align_up(l.signals.offset + l.signals.bytes),
                 snac::PacketLayout{ranks, packet_capacity}.packets() * sizeof(snac::Packet)};
    l.pair_staging = {align_up(l.packets.offset + l.packets.bytes),
                      static_cast<std::size_t>(ranks) * pairs.slots * pairs.chunk_bytes};
    l.pair_signals = {align_up(l.pair_staging.offset + l.pair_staging.bytes),
                      snac::PairSignalLayout{ranks, pairs.slots, pairs.packet_slots}.words() * sizeof(snac::Flag)};
    l.pair_packets = {align_up(l.pair_signals.offset + l.pair_signals.bytes),
                      snac::PairPacketLayout{ranks, pairs.packet_slots, pairs.packet_bytes / snac::kPacketPayload}.packets() *
                          sizeof(snac::Packet)};
    l.bytes = align_up(l.pair_packets.offset + l.pair_packets.bytes);
    return l;
  }
};

// The rank-local block: [epochs | started | counters | scratch | pair sequences].
struct LocalBlockLayout {
  Span epochs{};
  Span started{};  // DeviceControl::started
  Span counters{};
  Span scratch{};
  Span pair_sequences{};  // snac::PairHandle::sequences, one set per epoch slot
  std::size_t bytes = 0;

  static constexpr LocalBlockLayout make(int ranks, std::uint32_t slots,
                                         std::size_t packet_capacity, int epoch_slots) {
    LocalBlockLayout l;
    l.epochs = {0, static_cast<std::size_t>(epoch_slots) * sizeof(snac::Epoch)};
    l.started = {align_up(l.epochs.bytes), static_cast<std::size_t>(epoch_slots) * sizeof(snac::Epoch)};
    l.counters = {align_up(l.started.offset + l.started.bytes),
                  snac::CounterLayout{ranks, slots}.words() * sizeof(std::uint64_t)};
    l.scratch = {align_up(l.counters.offset + l.counters.bytes),
                 snac::PacketLayout{ranks, packet_capacity}.scratch_bytes()};
    l.pair_sequences = {align_up(l.scratch.offset + l.scratch.bytes),
                        static_cast<std::size_t>(epoch_slots) * ranks * snac::kPairCounters * sizeof(std::uint64_t)};
    l.bytes = align_up(l.pair_sequences.offset + l.pair_sequences.bytes);
    return l;
  }
};

// Latency packets per (phase, half, producer) for a payload budget in bytes.
constexpr std::size_t packet_capacity(std::size_t packet_bytes) {
  return packet_bytes / snac::kPacketPayload;
}

}  // namespace purlin::runtime
