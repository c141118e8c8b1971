// Where each part of a rank's SNAC memory lives inside its two device allocations. Pure
// arithmetic, identical on every rank because the inputs are agreed (DeviceState checks): a
// peer's staging, signals and packets are found at the same offsets from its block's base.
#pragma once

#include <cstddef>
#include <cstdint>

#include "snac/handle.h"

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

// The peer-visible block: [staging | signals | packets].
struct PeerBlockLayout {
  Span staging{};
  Span signals{};
  Span packets{};
  std::size_t bytes = 0;

  static constexpr PeerBlockLayout make(int ranks, std::size_t staging_bytes,
                                        std::uint32_t slots, std::size_t packet_capacity) {
    PeerBlockLayout l;
    l.staging = {0, staging_bytes};
    l.signals = {align_up(l.staging.offset + l.staging.bytes),
                 snac::SignalLayout{ranks, slots}.words() * sizeof(snac::Flag)};
    l.packets = {align_up(l.signals.offset + l.signals.bytes),
                 snac::PacketLayout{ranks, packet_capacity}.packets() * sizeof(snac::Packet)};
    l.bytes = align_up(l.packets.offset + l.packets.bytes);
    return l;
  }
};

// The rank-local block: [epochs | started | counters | scratch].
struct LocalBlockLayout {
  Span epochs{};
  Span started{};  // DeviceControl::started
  Span counters{};
  Span scratch{};
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
    l.bytes = align_up(l.scratch.offset + l.scratch.bytes);
    return l;
  }
};

// Latency packets per (phase, half, producer) for a payload budget in bytes.
constexpr std::size_t packet_capacity(std::size_t packet_bytes) {
  return packet_bytes / snac::kPacketPayload;
}

}  // namespace purlin::runtime
