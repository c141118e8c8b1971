// 300 MiB messages (sized as DESIGN.md section 7 counts them: the full gathered output for
// AllGather(V) and Gather, the full per-rank input otherwise; odd counts): far beyond the staging
// buffers, so chunk slots are reused around the ring and producers wait for drain acks. Every
// collective with a few representative types and ops at 8 and 4 ranks, roots last, some in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases.h"
#include "harness.h"
#include "values.h"

namespace purlin::native_test {
namespace {

constexpr std::size_t kLargeBytes = std::size_t{300} << 20;

struct Param {
  int world;
  Coll coll;
};

struct Variant {
  ncclDataType_t type;
  Op op;
  bool in_place;
};

// What to run per collective and world: reductions over the types / ops that stress different
// arithmetic, copies over a 2- and a 1-byte type.
std::vector<Variant> variants(Coll c, int n) {
  if (reduces(c)) {
    if (n >= 8) {
      return {{ncclBfloat16, Op::kSum, false}, {ncclFloat32, Op::kMax, false}, {ncclInt32, Op::kProd, false},
              {ncclUint8, Op::kSum, false},    {ncclBfloat16, Op::kSum, true}};
    }
    return {{ncclBfloat16, Op::kSum, false}, {ncclFloat64, Op::kMin, true}};
  }
  if (n >= 8) {
    std::vector<Variant> v = {{ncclBfloat16, Op::kSum, false}, {ncclUint8, Op::kSum, false}};
    v.push_back({ncclBfloat16, Op::kSum, true});
    return v;
  }
  return {{ncclFloat32, Op::kSum, false}};
}

class Large : public GpuTestWithParam<Param> {};

TEST_P(Large, ThreeHundredMiB) {
  const auto [n, coll] = GetParam();
  World* w = world(n);
  if (w == nullptr) return;
  CaseLog log;
  for (const Variant& v : variants(coll, n)) {
    Case c;
    c.coll = coll;
    c.type = v.type;
    c.op = v.op;
    c.count = count_for_bytes(coll, n, type_bytes(v.type), kLargeBytes);
    c.in_place = v.in_place;
    c.root = n - 1;
    if (!log.run(w->runner(), c)) return;
  }
  EXPECT_GT(log.cases(), 0);
}

std::vector<Param> params() {
  std::vector<Param> v;
  for (int n : {8, 4}) {
    for (int c = 0; c < kColls; ++c) v.push_back({n, static_cast<Coll>(c)});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Native, Large, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return world_label(info.param.world) + "_" + coll_name(info.param.coll);
                         });

// Every kernel instance at 300 MiB: a reduction's kernel is per (type, op), so reductions run
// every type x every op; a copy's kernel moves bytes, so copies run one type per element size.
// Two ranks keep the host reference affordable (the protocol paths, ring wrap and drain acks,
// are the same at every world size); in place and out of place alternate.
class LargeEveryKernel : public GpuTestWithParam<Coll> {};

TEST_P(LargeEveryKernel, ThreeHundredMiB) {
  const Coll coll = GetParam();
  constexpr int n = 2;
  World* w = world(n);
  if (w == nullptr) return;
  const std::vector<ncclDataType_t> copy_types = {ncclUint8, ncclBfloat16, ncclFloat32, ncclFloat64};
  const std::vector<ncclDataType_t> types =
      reduces(coll) ? std::vector<ncclDataType_t>(kAllTypes.begin(), kAllTypes.end()) : copy_types;
  const std::vector<Op> ops = reduces(coll) ? std::vector<Op>(kAllOps.begin(), kAllOps.end()) : std::vector<Op>{Op::kSum};
  CaseLog log;
  int i = 0;
  for (ncclDataType_t t : types) {
    for (Op op : ops) {
      Case c;
      c.coll = coll;
      c.type = t;
      c.op = op;
      c.count = count_for_bytes(coll, n, type_bytes(t), kLargeBytes);
      c.in_place = i++ % 2 == 1;
      c.root = 1;
      if (!log.run(w->runner(), c)) return;
    }
  }
  EXPECT_EQ(log.cases(), static_cast<int>(types.size() * ops.size()));
  ::testing::Test::RecordProperty("cases", log.cases());
}

std::vector<Coll> every_collective() {
  std::vector<Coll> v;
  for (int c = 0; c < kColls; ++c) v.push_back(static_cast<Coll>(c));
  return v;
}

INSTANTIATE_TEST_SUITE_P(Native, LargeEveryKernel, ::testing::ValuesIn(every_collective()),
                         [](const ::testing::TestParamInfo<Coll>& info) { return std::string("W2_") + coll_name(info.param); });

}  // namespace
}  // namespace purlin::native_test
