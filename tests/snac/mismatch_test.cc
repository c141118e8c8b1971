// Mismatch detection (fingerprint.h): ranks that disagree on the collective, count, type, op or
// root of a call end it with Status::mismatch and a report naming both ranks' calls, well
// before the waits' timeout, in both regimes.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness.h"
#include "layout/collectives.h"
#include "snac/pair_launch.h"

namespace purlin::snac::test {
namespace {

namespace L = purlin::layout;

// ncclDataType_t and launch::Collective indices, as the bridge would fill them in.
constexpr int kFloat = 7;
constexpr int kDouble = 8;
constexpr int kAllGather = 0;
constexpr int kAllReduce = 8;
constexpr int kBroadcast = 9;

// One rank's call: its buffers and a launch of its own instance.
struct RankCall {
  std::vector<std::byte> in;
  std::vector<std::byte> out;
  std::function<Status(const HostBackend&, const Handle&, const Policy&)> launch;
};

template <class C, class E, class Op = op::Sum>
RankCall call(std::size_t count, int ranks, int collective, int type, int op, int root = 0) {
  RankCall rc;
  Args<C, E> a;
  if constexpr (std::is_same_v<typename C::Input, typename C::Output>) {
    a.in_shape = a.out_shape = L::whole_buffer_shape<C>(count, ranks, root, 16 / sizeof(E), false);
  } else {
    a.in_shape = a.out_shape = L::FixedShape::uniform(count, ranks);
  }
  a.root = root;
  a.fingerprint = Fingerprint::make(collective, type, op, root, count);
  rc.in.assign(C::Input::extent(a.in_shape, 0) * sizeof(E) * ranks + 64, std::byte{1});
  rc.out.assign(C::Output::extent(a.out_shape, 0) * sizeof(E) * ranks + 64, std::byte{0});
  a.input = rc.in.data();
  a.output = rc.out.data();
  rc.launch = [a](const HostBackend& be, const Handle& h, const Policy& p) {
    return host_launch<C, E, Op>(be, h, p, a);
  };
  return rc;
}

class Mismatch : public ::testing::TestWithParam<Regime> {
 protected:
  // Runs `calls[r]` on rank r; expects the mismatch, soon, with both calls in the report.
  void expect_mismatch(std::vector<RankCall> calls, const std::string& a, const std::string& b) {
    const int n = static_cast<int>(calls.size());
    HostWorldConfig cfg = test_world(n);
    cfg.timeout = std::chrono::milliseconds(10000);
    HostWorld world(cfg);
    RunSetup s;
    s.regime = GetParam();
    const Policy p = test_policy(s);
    const auto start = std::chrono::steady_clock::now();
    const Status status = world.run(1, [&](int r, int, const HostBackend& be) {
      return calls[static_cast<std::size_t>(r)].launch(be, world.handle(r), p);
    });
    const auto took = std::chrono::steady_clock::now() - start;
    const std::string report = world.control().report();
    EXPECT_EQ(status, Status::mismatch) << report;
    EXPECT_LT(took, std::chrono::seconds(2)) << report;
    EXPECT_NE(report.find("call mismatch"), std::string::npos) << report;
    EXPECT_NE(report.find(a), std::string::npos) << report;
    EXPECT_NE(report.find(b), std::string::npos) << report;
  }
};

TEST_P(Mismatch, Count) {
  std::vector<RankCall> c;
  c.push_back(call<L::AllReduce, float>(96, 2, kAllReduce, kFloat, 0));
  c.push_back(call<L::AllReduce, float>(160, 2, kAllReduce, kFloat, 0));
  expect_mismatch(std::move(c), "AllReduce(type 7, op 0, root 0, count 96)",
                  "AllReduce(type 7, op 0, root 0, count 160)");
}

TEST_P(Mismatch, Type) {
  std::vector<RankCall> c;
  c.push_back(call<L::AllReduce, float>(96, 2, kAllReduce, kFloat, 0));
  c.push_back(call<L::AllReduce, double>(96, 2, kAllReduce, kDouble, 0));
  expect_mismatch(std::move(c), "AllReduce(type 7,", "AllReduce(type 8,");
}

TEST_P(Mismatch, Op) {
  std::vector<RankCall> c;
  c.push_back(call<L::AllReduce, float, op::Sum>(96, 2, kAllReduce, kFloat, 0));
  c.push_back(call<L::AllReduce, float, op::Max>(96, 2, kAllReduce, kFloat, 2));
  expect_mismatch(std::move(c), "AllReduce(type 7, op 0,", "AllReduce(type 7, op 2,");
}

TEST_P(Mismatch, Root) {
  std::vector<RankCall> c;
  for (int r = 0; r < 3; ++r) {
    c.push_back(call<L::Broadcast, float>(96, 3, kBroadcast, kFloat, 0, r == 2 ? 1 : 0));
  }
  expect_mismatch(std::move(c), "Broadcast(type 7, op 0, root 0,", "Broadcast(type 7, op 0, root 1,");
}

TEST_P(Mismatch, Collective) {
  std::vector<RankCall> c;
  c.push_back(call<L::AllReduce, float>(96, 2, kAllReduce, kFloat, 0));
  c.push_back(call<L::AllGather, float>(48, 2, kAllGather, kFloat, 0));
  expect_mismatch(std::move(c), "AllReduce(type 7, op 0, root 0, count 96)",
                  "AllGather(type 7, op 0, root 0, count 48)");
}

// Point-to-point (pairs.h): a receive whose count differs from the matching send's ends as a
// mismatch at its first chunk, well before the waits' timeout, instead of misaligning every
// later transfer of the pair.
class PairMismatch : public ::testing::TestWithParam<std::pair<std::size_t, std::size_t>> {};

// Both staged (100 B sent, 200 B expected) and as packets (40 and 64 B: up to 96 travel as
// packets in a test world).
TEST_P(PairMismatch, ReceiveCountDiffersFromTheSend) {
  HostWorldConfig config;
  config.ranks = 2;
  config.workers = 2;
  config.timeout = std::chrono::milliseconds(20000);
  HostWorld world(config);
  std::vector<std::byte> src(GetParam().first, std::byte{1});
  std::vector<std::byte> dst(GetParam().second);
  const PairOp send[] = {{src.data(), nullptr, src.size(), 1, PairDirection::send}};
  const PairOp recv[] = {{nullptr, dst.data(), dst.size(), 0, PairDirection::recv}};
  PairLaunch<kSmallPairOps> l0;
  PairLaunch<kSmallPairOps> l1;
  const char* what = "";
  ASSERT_EQ(make_pair_launch(world.pair_handle(0), send, 1, 1, l0, &what), Status::ok);
  ASSERT_EQ(make_pair_launch(world.pair_handle(1), recv, 1, 1, l1, &what), Status::ok);
  const auto start = std::chrono::steady_clock::now();
  const Status s = world.run(1, [&](int rank, int, const HostBackend& be) {
    return host_pair_launch(be, world.pair_handle(rank), rank == 0 ? l0 : l1);
  });
  EXPECT_EQ(s, Status::mismatch) << world.control().report();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

INSTANTIATE_TEST_SUITE_P(Regimes, PairMismatch,
                         ::testing::Values(std::pair<std::size_t, std::size_t>{100, 200},
                                           std::pair<std::size_t, std::size_t>{40, 64}),
                         [](const auto& info) { return info.param.first == 100 ? "staged" : "packets"; });

INSTANTIATE_TEST_SUITE_P(Regimes, Mismatch, ::testing::Values(Regime::throughput, Regime::latency),
                         [](const auto& info) {
                           return info.param == Regime::latency ? "latency" : "throughput";
                         });

}  // namespace
}  // namespace purlin::snac::test
