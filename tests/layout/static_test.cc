// Compile-time checks: declarations, composition rules and arithmetic evaluated as constant
// expressions. If this file compiles, the checks passed; the TEST only makes the suite list it.
// compile_fail.cc covers declarations that must not compile.
#include "layout/collectives.h"

#include <gtest/gtest.h>

#include <array>

#include "layout/chunking.h"
#include "layout/flags.h"

namespace purlin::layout {
namespace {

// Which compositions the layouts allow.
static_assert(Composable<ReduceScatter, AllGather>);
static_assert(Composable<Scatter, AllGather>);
static_assert(Composable<ReduceScatter, Gather>);
static_assert(Composable<ReduceScatterV, AllGatherV>);  // an AllReduceV would work
static_assert(!Composable<AllGather, AllGather>);       // scattered into packed
static_assert(!Composable<ReduceScatterV, AllGather>);  // V into fixed
static_assert(!Composable<Scatter, Gather>);            // two root roles
static_assert(!Composable<AllReduce, AllGather>);       // nesting is not a phase
static_assert(!Composable<int, AllGather>);

static_assert(Declaration<AllGather> && Declaration<AllReduce> && Declaration<Reduce>);
static_assert(SinglePhase<AllToAllV> && !SinglePhase<Broadcast> && !SinglePhase<Packed>);
static_assert(AllReduce::phases == 2 && AllGather::phases == 1 && AllGather::role_groups == 2);
static_assert(std::is_same_v<AllReduce::First, ReduceScatter::First>);
static_assert(std::is_same_v<Broadcast::Last, AllGather::First>);

// The transform table, including what it rejects.
static_assert(defines_collective(ConsumeOp::copy, LayoutKind::packed, LayoutKind::scattered,
                                 Root::none));
static_assert(!defines_collective(ConsumeOp::copy, LayoutKind::scattered, LayoutKind::packed,
                                  Root::none));  // no single source without a root
static_assert(!defines_collective(ConsumeOp::reduce, LayoutKind::packed, LayoutKind::scattered,
                                  Root::none));
static_assert(!defines_collective(ConsumeOp::copy, LayoutKind::packed, LayoutKind::scattered,
                                  Root::producer));
static_assert(!defines_collective(ConsumeOp::copy, LayoutKind::transposed, LayoutKind::scattered,
                                  Root::none));

// Sources and notifications as constant expressions.
static_assert(AllToAll::source(2, 5, 0).rank == 5 && AllToAll::source(2, 5, 0).partition == 2);
static_assert(AllGather::source(2, 5, 0).rank == 5 && AllGather::source(2, 5, 0).partition == 5);
static_assert(ReduceScatter::source(2, 2, 0).rank == kAllRanks);
static_assert(Scatter::source(2, 2, 6).rank == 6);
static_assert(AllGather::notifies(1, 1, 3, 0) && !AllGather::notifies(1, 0, 3, 0));
static_assert(ReduceScatter::notifies(1, 3, 3, 0) && !ReduceScatter::notifies(1, 3, 2, 0));
static_assert(Gather::notifies(1, 1, 0, 0) && !Gather::notifies(1, 1, 2, 0));
static_assert(!Scatter::notifies(1, 2, 2, 0) && Scatter::notifies(0, 2, 2, 0));
static_assert(AllGather::fan_out(0, 0, 8, 0) == 8 && Gather::fan_in(3, 8, 3) == 8);
static_assert(Reduce::intermediate_in_output(2, 2) && !Reduce::intermediate_in_output(1, 2));
static_assert(AllReduce::intermediate_in_output(1, 0) && Broadcast::intermediate_in_output(1, 0));

// Region arithmetic in constant expressions, V included.
constexpr std::array<std::size_t, 4> kCounts = {3, 0, 4, 1};
constexpr VariableShape kV{kCounts.data(), nullptr, 4};
static_assert(ScatteredV::region(kV, 0, 2) == Region{3, 4});
static_assert(TransposedV::region(kV, 1, 3) == Region{7, 1});
static_assert(PackedV::region(kV, 2, 2) == Region{0, 4} && PackedV::region(kV, 2, 1).empty());
static_assert(ScatteredV::extent(kV, 0) == 8 && kV.max_size() == 4);
static_assert(Scattered::region(FixedShape::split(10, 4, 4), 1, 2) == Region{8, 2});
static_assert(Packed::extent(FixedShape::uniform(5, 3), 2) == 5);

// Flags: parity alternates for any chunk count, and flags stay inside their launch.
constexpr bool parity_alternates() {
  Epoch e = 0;
  for (std::uint64_t n = 0; n < 64; ++n) {
    const Epoch next = next_epoch(e, n);
    if (staging_half(next) == staging_half(e)) return false;
    if (n != 0 && flag_value(e, n - 1) > next) return false;
    e = next;
  }
  return true;
}
static_assert(parity_alternates());
static_assert(drain_wait_value(9, 6, 4) == flag_value(9, 2));
static_assert(StagingRing::fit(4096, 1024).offset(1, 5) == 4096 + 1024);

TEST(Static, CompileTimeChecksHold) { SUCCEED(); }

}  // namespace
}  // namespace purlin::layout
