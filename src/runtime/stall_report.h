// The text of a stall record (snac/handle.h: StallRecord): which wait of a rank's launch gave
// up, named from where the polled word lies in the rank's memory, or which peer's call differed.
#pragma once

#include <cstdint>
#include <string>

#include "snac/handle.h"
#include "snac/pairs.h"

namespace purlin::runtime {

// Where the words a rank's waits poll lie (device addresses as integers) and how each area is
// laid out.
struct PolledWords {
  snac::SignalLayout signals;
  snac::PacketLayout packets;
  snac::PairSignalLayout pair_signals;
  snac::PairPacketLayout pair_packets;
  std::uintptr_t signals_at = 0;
  std::uintptr_t packets_at = 0;
  std::uintptr_t pair_signals_at = 0;
  std::uintptr_t pair_packets_at = 0;
};

// One line for a filled record.
std::string describe_stall(const snac::StallRecord& r, const PolledWords& w);

}  // namespace purlin::runtime
