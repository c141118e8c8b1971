// The kernel in device_probe.cu must compute exactly what the host computes. SKIPPED without a
// GPU; the device compile itself already happened when this binary was built.
#include <gtest/gtest.h>

#include <vector>

#include "device_probe.h"

namespace purlin::layout::test {
namespace {

TEST(LayoutDevice, KernelMatchesHost) {
  for (int ranks : {1, 3, 8}) {
    std::vector<std::size_t> counts(ranks);
    for (int k = 0; k < ranks; ++k) counts[k] = static_cast<std::size_t>(k % 3 == 1 ? 0 : 37 * k + 5);
    std::vector<std::uint64_t> device(static_cast<std::size_t>(ranks) * kProbeValues, 0);
    const ProbeResult result = probe_on_device(counts.data(), ranks, device.data());
    if (result == ProbeResult::no_device) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(result, ProbeResult::ran);
    std::vector<std::uint64_t> host(device.size(), 0);
    for (int k = 0; k < ranks; ++k) probe(k, counts.data(), ranks, host.data() + k * kProbeValues);
    EXPECT_EQ(device, host) << "ranks=" << ranks;
  }
}

}  // namespace
}  // namespace purlin::layout::test
