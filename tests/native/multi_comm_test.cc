// Several communicators alive at once on GPU 0: their protocol state (staging, flags, epochs)
// must stay separate whatever the interleaving of their calls, and creating or destroying one
// must not disturb another.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cases.h"
#include "harness.h"
#include "values.h"

namespace purlin::native_test {
namespace {

// A different case for every i: all collectives, types, ops, placements and roots come round.
Case mixed_case(int i, int n) {
  Case c;
  c.coll = static_cast<Coll>(i % kColls);
  c.type = kAllTypes[static_cast<std::size_t>((i * 5) % 12)];
  c.op = static_cast<Op>((i * 3) % kOps);
  const std::size_t es = type_bytes(c.type);
  const std::size_t counts[] = {3, (1031 / es) | 1, (std::size_t{1} << 20) / es, 1};
  c.count = counts[(i / kColls + i) % 4];
  c.in_place = i % 3 == 0;
  c.root = i % n;
  c.v_displs = i % 2 == 0;
  c.v_seed = i % 3;
  return c;
}

class MultiComm : public GpuTest {
 protected:
  std::unique_ptr<World> make(int n, const World* share_streams = nullptr) {
    std::string error;
    std::unique_ptr<World> w = World::create(n, &error, share_streams);
    if (!w) ADD_FAILURE() << "world of " << n << " ranks: " << error;
    return w;
  }
};

// Two communicators over the same streams: calls of A, B and A again follow each other in
// stream order with no host synchronization, the pattern of two process groups on one stream.
TEST_F(MultiComm, InterleavedOnSharedStreams) {
  auto a = make(4);
  if (!a) return;
  auto b = make(4, a.get());
  if (!b) return;
  Runner a1(4, a->ranks()), a2(4, a->ranks()), b1(4, b->ranks());
  CaseLog log;
  for (int i = 0; i < 3 * kColls; ++i) {
    const Case ca1 = mixed_case(i, 4), ca2 = mixed_case(i + 7, 4), cb1 = mixed_case(i + 3, 4);
    std::string error;
    ASSERT_TRUE(a1.prepare(ca1, &error) && a2.prepare(ca2, &error) && b1.prepare(cb1, &error)) << error;
    const Issued ia1 = issue_all(a1, Style::kGroup);
    const Issued ib1 = issue_all(b1, Style::kThreads);
    const Issued ia2 = issue_all(a2, Style::kGroup);
    if (!log.record(ca1, 4, Style::kGroup, a1.finish(ia1.results, ia1.group)) ||
        !log.record(cb1, 4, Style::kThreads, b1.finish(ib1.results, ib1.group)) ||
        !log.record(ca2, 4, Style::kGroup, a2.finish(ia2.results, ia2.group))) {
      return;
    }
  }
}

// Communicators of 4 and 2 ranks with their own streams, used in turn, while one of 8 ranks is
// created, used and destroyed in between.
TEST_F(MultiComm, DifferentSizesAndLifetimes) {
  auto a = make(4);
  auto b = make(2);
  if (!a || !b) return;
  CaseLog log;
  for (int i = 0; i < 2 * kColls; ++i) {
    if (!log.run(a->runner(), mixed_case(i, 4)) || !log.run(b->runner(), mixed_case(i + 5, 2))) return;
    if (i == kColls) {
      auto c = make(8);
      if (!c) return;
      for (int j = 0; j < kColls; ++j) {
        if (!log.run(c->runner(), mixed_case(j + 2, 8))) return;
      }
    }  // c destroyed here: a and b carry on
  }
}

// Two communicators on their own streams, each call of one enqueued while the other's may still
// run. Both must be co-resident on the GPU: small worlds keep their CTAs within the GPU.
TEST_F(MultiComm, ConcurrentOnOwnStreams) {
  auto a = make(2);
  auto b = make(2);
  if (!a || !b) return;
  Runner ra(2, a->ranks()), rb(2, b->ranks());
  CaseLog log;
  for (int i = 0; i < 2 * kColls; ++i) {
    const Case ca = mixed_case(i, 2), cb = mixed_case(i + 4, 2);
    std::string error;
    ASSERT_TRUE(ra.prepare(ca, &error) && rb.prepare(cb, &error)) << error;
    const Issued ia = issue_all(ra, Style::kGroup);
    const Issued ib = issue_all(rb, Style::kGroup);
    if (!log.record(ca, 2, Style::kGroup, ra.finish(ia.results, ia.group)) ||
        !log.record(cb, 2, Style::kGroup, rb.finish(ib.results, ib.group))) {
      return;
    }
  }
}

}  // namespace
}  // namespace purlin::native_test
