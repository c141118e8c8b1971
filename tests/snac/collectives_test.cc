// All eleven collectives on the host datapath: world sizes {1, 2, 3, 4, 8} x both regimes (the
// throughput one with staged inputs and with zero-copy, the latency one with compositions in
// one hop and in two) x
// counts 0, 1, odd and large enough to cross chunk boundaries and wrap the staging ring, in
// place and out of place, rooted ones from the first and the last rank. Every run is three
// consecutive calls on one protocol state (epoch parity, monotonic flags, drain acks across
// launches); results are compared bit for bit with specs.h.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "specs.h"

namespace purlin::snac::test {
namespace {

struct Param {
  int ranks;
  Regime regime;
  bool zero_copy = false;
  bool one_hop = true;  // latency: compositions in one hop (else in two)
  bool rank_roles = false;  // throughput: a worker budget, split per rank where rooted
  bool spread_teams = true;  // throughput: chunks cut for every team (else teams share them)
};

// One world per test: its cases (sizes, in place, roots, team sizes) run back to back on the
// same protocol state, so every test is also a long sequence of launches with changing ring
// geometry and worker counts.
class Collectives : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override { world_ = std::make_unique<HostWorld>(test_world(n())); }

  int n() const { return GetParam().ranks; }

  std::vector<int> roots() const {
    return n() == 1 ? std::vector<int>{0} : std::vector<int>{0, n() - 1};
  }

  // Runs `spec` out of place and, when `in_place`, in place. Team sizes alternate with the
  // case index so that both the single-CTA and the shared-chunk paths see every collective.
  template <class C, class E, class Op>
  void check(const Spec<C, E, Op>& spec, int index, bool in_place) {
    for (bool ip : {false, true}) {
      if (ip && !in_place) continue;
      RunSetup s;
      s.regime = GetParam().regime;
      s.zero_copy = GetParam().zero_copy;
      s.one_hop = GetParam().one_hop;
      s.team = 1 + index % 2;
      s.workers = GetParam().rank_roles ? 6 : 0;
      s.rank_roles = GetParam().rank_roles;
      s.spread_teams = GetParam().spread_teams;
      s.in_place = ip;
      s.seed = static_cast<std::uint64_t>(index * 2 + (ip ? 1 : 0) + 1);
      SCOPED_TRACE(testing::Message() << "case " << index << " team " << s.team
                                      << (ip ? " in place" : " out of place"));
      run_spec(*world_, spec, s);
      if (testing::Test::HasFailure()) return;  // the world's state is undefined now
    }
  }

  std::unique_ptr<HostWorld> world_;
};

constexpr std::size_t kCounts[] = {0, 1, 7, 33, 101};     // elements per rank
constexpr std::size_t kTotals[] = {0, 1, 13, 250, 1201};  // elements of a whole buffer
constexpr std::size_t kScales[] = {0, 1, 9, 40};          // V partition scale (0: all empty)

TEST_P(Collectives, AllGather) {
  int i = 0;
  for (std::size_t c : kCounts) check(all_gather<std::uint8_t>(n(), c), i++, true);
}

TEST_P(Collectives, ReduceScatter) {
  int i = 0;
  for (std::size_t c : kCounts) {
    check(reduce_scatter<std::int32_t, op::Sum>(n(), c), i++, true);
  }
}

TEST_P(Collectives, AllToAll) {
  int i = 0;
  for (std::size_t c : kCounts) check(all_to_all<double>(n(), c), i++, true);
}

TEST_P(Collectives, AllReduce) {
  int i = 0;
  for (std::size_t t : kTotals) {
    check(all_reduce<float, op::Sum>(n(), t), i++, true);
    check(all_reduce<__nv_bfloat16, op::Sum>(n(), t), i++, true);
  }
}

TEST_P(Collectives, AllGatherV) {
  int i = 0;
  for (std::size_t scale : kScales) {
    check(all_gather_v<float>(n(), scale, i, false), i, true);
    ++i;
    check(all_gather_v<std::int8_t>(n(), scale, i, true), i, true);
    ++i;
  }
}

TEST_P(Collectives, ReduceScatterV) {
  int i = 0;
  for (std::size_t scale : kScales) {
    check(reduce_scatter_v<__nv_bfloat16, op::Sum>(n(), scale, i, i % 2 == 1), i, true);
    ++i;
  }
}

TEST_P(Collectives, AllToAllV) {
  int i = 0;
  for (std::size_t scale : kScales) {
    check(all_to_all_v<std::int32_t>(n(), scale, i), i, false);
    // Equal send and receive partitions on every rank: in place too.
    check(all_to_all_v<std::int32_t>(n(), scale, i, /*symmetric=*/true), i, true);
    ++i;
  }
}

TEST_P(Collectives, Broadcast) {
  int i = 0;
  for (std::size_t t : kTotals) {
    for (int root : roots()) check(broadcast<__half>(n(), t, root), i++, true);
  }
}

TEST_P(Collectives, Reduce) {
  int i = 0;
  for (std::size_t t : kTotals) {
    for (int root : roots()) {
      const bool around = GetParam().rank_roles && t > 0;  // as plans_rank_roles decides
      check(reduce<std::int64_t, op::Max>(n(), t, root, around), i++, true);
    }
  }
}

TEST_P(Collectives, Gather) {
  int i = 0;
  for (std::size_t c : kCounts) {
    for (int root : roots()) check(gather<std::int8_t>(n(), c, root), i++, true);
  }
}

TEST_P(Collectives, Scatter) {
  int i = 0;
  for (std::size_t c : kCounts) {
    for (int root : roots()) check(scatter<std::uint64_t>(n(), c, root), i++, true);
  }
}

// Every reduction op on one odd world size and both regimes, so each op's path through the
// engine is exercised (the Atom's own tests cover the op arithmetic exhaustively).
class ReductionOps : public Collectives {};

TEST_P(ReductionOps, AllReduce) {
  check(all_reduce<std::int32_t, op::Prod>(n(), 250), 0, false);
  check(all_reduce<double, op::Min>(n(), 250), 1, false);
  check(all_reduce<__nv_bfloat16, op::Avg>(n(), 250), 2, false);
  check(all_reduce<std::int32_t, op::Avg>(n(), 13), 3, false);
  check(all_reduce<std::uint8_t, op::Sum>(n(), 1201), 4, false);
  check(reduce_scatter<float, op::Min>(n(), 33), 5, true);
  check(all_reduce_premul<__nv_bfloat16>(n(), 250), 6, false);
  check(all_reduce_premul<double>(n(), 1201), 7, false);
  check(reduce_scatter_premul<float>(n(), 33), 8, true);
}

std::string name(const testing::TestParamInfo<Param>& info) {
  return std::string(info.param.regime == Regime::latency
                         ? (info.param.one_hop ? "latency" : "latency_two_hop")
                     : info.param.zero_copy ? "zerocopy"
                                            : "throughput") +
         (info.param.rank_roles ? "_rankroles" : "") + (info.param.spread_teams ? "" : "_shared") +
         "_n" + std::to_string(info.param.ranks);
}

// The throughput regime both ways: staged inputs and inputs read in place (zero-copy).
std::vector<Param> params() {
  std::vector<Param> out;
  for (int n : {1, 2, 3, 4, 8}) out.push_back({n, Regime::throughput, false});
  for (int n : {1, 2, 3, 4, 8}) out.push_back({n, Regime::throughput, true});
  for (int n : {1, 2, 3, 4, 8}) out.push_back({n, Regime::latency, false});
  for (int n : {2, 3, 8}) out.push_back({n, Regime::latency, false, false});
  // A worker budget split by bytes moved, per rank for Reduce and Broadcast (the runtime's
  // policy for ranks sharing one GPU), staged and zero-copy.
  for (int n : {2, 3, 4, 8}) {
    for (bool zc : {false, true}) out.push_back({n, Regime::throughput, zc, true, true});
  }
  // The same budget with chunks that are not cut for every team: teams share them.
  for (int n : {2, 3, 8}) {
    for (bool zc : {false, true}) out.push_back({n, Regime::throughput, zc, true, true, false});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Snac, Collectives, testing::ValuesIn(params()), name);
INSTANTIATE_TEST_SUITE_P(Snac, ReductionOps,
                         testing::Values(Param{3, Regime::throughput},
                                         Param{3, Regime::throughput, true},
                                         Param{3, Regime::latency},
                                         Param{3, Regime::latency, false, false}),
                         name);

}  // namespace
}  // namespace purlin::snac::test
