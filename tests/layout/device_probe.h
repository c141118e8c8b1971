// Layout arithmetic evaluated identically by a kernel and by the host, to prove the headers
// work in device code (device_probe.cu) and give the same answers there (device_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/chunking.h"
#include "layout/collectives.h"
#include "layout/flags.h"
#include "layout/host_device.h"

namespace purlin::layout::test {

inline constexpr int kProbeValues = 16;

// Everything a SNAC thread handling partition k would compute. `counts` has `ranks` entries.
PURLIN_HD constexpr void probe(int k, const std::size_t* counts, int ranks, std::uint64_t* out) {
  const VariableShape v{counts, nullptr, ranks};
  const FixedShape split = FixedShape::split(1001, ranks, 8);
  const Region sv = ScatteredV::region(v, k, k);
  const Region tv = TransposedV::region(v, 0, k);
  const Region pv = PackedV::region(v, k, k);
  const Region sf = Scattered::region(split, k, k).in_bytes(2);
  const Chunking ch = Chunking::make(48, 2);
  const Region c1 = ch.range(sf, 1);
  const Epoch e = next_epoch(5, launch_chunks(v, 2, ch));
  const StagingRing ring = StagingRing::fit(4096, ch.stride);
  const std::uint64_t values[kProbeValues] = {
      sv.offset, sv.size, tv.offset, pv.size, sf.offset, sf.size, ch.count(sf.size),
      c1.offset, c1.size, e, flag_value(e, static_cast<std::uint64_t>(k)),
      drain_wait_value(e, static_cast<std::uint64_t>(k) + 90, ring.slots),
      ring.offset(e, static_cast<std::uint64_t>(k) + 85),
      static_cast<std::uint64_t>(AllGather::fan_out(k, k, ranks, 0)),
      static_cast<std::uint64_t>(ReduceScatter::fan_in(k, ranks, 0)),
      static_cast<std::uint64_t>(Gather::notifies(k, k, 0, 0))};
  for (int i = 0; i < kProbeValues; ++i) out[i] = values[i];
}

enum class ProbeResult { ran, no_device, failed };

// Runs probe() for k = 0 .. ranks-1 on the GPU; out has ranks * kProbeValues entries.
ProbeResult probe_on_device(const std::size_t* counts, int ranks, std::uint64_t* out);

}  // namespace purlin::layout::test
