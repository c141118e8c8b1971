// Names of the words a SNAC wait polls, for the report of a wait that gave up: the inverse of
// SignalLayout and PacketLayout (handle.h). A hang across ranks is diagnosed by who waited for
// whom, so the report names the peer, the phase and the slot instead of a bare address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "snac/handle.h"
#include "snac/pairs.h"

namespace purlin::snac {

// The word at `index` of a rank's signal array, e.g. "flag from rank 3 (phase 0, slot 1)".
inline std::string name_signal(const SignalLayout& l, std::size_t index) {
  const auto ranks = static_cast<std::size_t>(l.ranks);
  const std::size_t slots = l.slots;
  if (ranks == 0 || slots == 0) return "word " + std::to_string(index) + " of an empty layout";
  const std::string s = std::to_string(index % slots);
  if (index < l.ack(0, 0, 0, 0)) {
    const std::size_t t = index / slots;
    return "flag from rank " + std::to_string(t % ranks) + " (phase " + std::to_string(t / ranks) +
           ", slot " + s + ")";
  }
  if (index < l.release(0, 0)) {
    const std::size_t t = (index - l.ack(0, 0, 0, 0)) / slots;
    return "ack from rank " + std::to_string(t / 2 % ranks) + " (phase " +
           std::to_string(t / 2 / ranks) + ", half " + std::to_string(t % 2) + ", slot " + s + ")";
  }
  if (index < l.input_address(0, 0)) {
    const std::size_t t = index - l.release(0, 0);
    return "release of half " + std::to_string(t % 2) + " from rank " + std::to_string(t / 2);
  }
  if (index < l.words()) {
    const std::size_t t = index - l.input_address(0, 0);
    return "input address from rank " + std::to_string(t / 2) + " (half " + std::to_string(t % 2) +
           ")";
  }
  return "word " + std::to_string(index) + " past the " + std::to_string(l.words()) +
         " signal words";
}

// The packet at `index` of a rank's packet buffer, e.g. "packet 17 from rank 2 (phase 1, half 0)".
inline std::string name_packet(const PacketLayout& l, std::size_t index) {
  if (index >= l.fingerprint(0, 0) && index < l.packets()) {
    const std::size_t t = index - l.fingerprint(0, 0);
    const auto ranks = static_cast<std::size_t>(l.ranks);
    return "call fingerprint from rank " + std::to_string(t % ranks) + " (half " +
           std::to_string(t / ranks) + ")";
  }
  if (l.capacity == 0 || index >= l.packets()) {
    return "packet " + std::to_string(index) + " past the " + std::to_string(l.packets()) +
           " packets";
  }
  const std::size_t t = index / l.capacity;
  const auto ranks = static_cast<std::size_t>(l.ranks);
  return "packet " + std::to_string(index % l.capacity) + " from rank " +
         std::to_string(t % ranks) + " (phase " + std::to_string(t / ranks / 2) + ", half " +
         std::to_string(t / ranks % 2) + ")";
}

// The word at `index` of a rank's point-to-point signal array (pairs.h), e.g. "point-to-point
// ready word from rank 3 (slot 1)".
inline std::string name_pair_signal(const PairSignalLayout& l, std::size_t index) {
  const std::size_t slots = l.slots;
  const auto ranks = static_cast<std::size_t>(l.ranks);
  if (slots == 0 || index >= l.words()) return "word " + std::to_string(index) + " past the point-to-point words";
  if (index >= l.packet_ack(0, 0)) {
    const std::size_t t = index - l.packet_ack(0, 0);
    return "point-to-point packet ack from receiver rank " + std::to_string(t / l.packet_slots) + " (packet slot " +
           std::to_string(t % l.packet_slots) + ")";
  }
  const std::size_t t = index / slots;
  static constexpr const char* kKinds[] = {"ready word from sender", "byte count from sender", "ack from receiver"};
  return std::string("point-to-point ") + kKinds[t / ranks] + " rank " + std::to_string(t % ranks) + " (slot " +
         std::to_string(index % slots) + ")";
}

// The packet at `index` of a rank's point-to-point packet buffer, e.g. "point-to-point packet 5
// from rank 2 (packet slot 1)".
inline std::string name_pair_packet(const PairPacketLayout& l, std::size_t index) {
  if (l.per_slot == 0 || l.slots == 0 || index >= l.packets()) return "packet " + std::to_string(index) + " past the point-to-point packets";
  const std::size_t t = index / l.per_slot;
  return "point-to-point packet " + std::to_string(index % l.per_slot) + " from rank " + std::to_string(t / l.slots) +
         " (packet slot " + std::to_string(t % l.slots) + ")";
}

// A word a wait polled, named from where it lies: in the rank's signal array (based at
// `signals`) or its packet buffer (at `packets`), the only words a SNAC wait polls. Addresses
// as integers, so that a host can name a device address it cannot dereference.
inline std::string name_polled_word(const SignalLayout& sl, const PacketLayout& pl,
                                    std::uintptr_t signals, std::uintptr_t packets,
                                    std::uintptr_t word) {
  if (word >= signals && word < signals + sl.words() * sizeof(Flag)) {
    return name_signal(sl, (word - signals) / sizeof(Flag));
  }
  if (word >= packets && word < packets + pl.packets() * sizeof(Packet)) {
    return name_packet(pl, (word - packets) / sizeof(Packet));
  }
  return "word at " + std::to_string(word) + ", outside the rank's signals and packets";
}

}  // namespace purlin::snac
