// The bridge's host half: Call -> snac::Args (shapes, bytes for copies, split granule, V
// tables, PreMulSum scalar) and planning verdicts, checked without a GPU. The expected shapes
// are written the way tests/snac/specs.h builds them for the host engine tests.
#include "launch/args.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "launch/instances.h"
#include "layout/collectives.h"

namespace purlin::launch {
namespace {

namespace L = purlin::layout;

constexpr int kFloat = 7;  // ncclFloat32
constexpr int kBf16 = 9;   // ncclBfloat16
constexpr int kInt8 = 0;   // ncclInt8
constexpr int kDouble = 8;

snac::Handle handle(int rank, int ranks) {
  snac::Handle h;
  h.rank = rank;
  h.ranks = ranks;
  h.staging_bytes = std::size_t{8} << 20;
  h.slots = 16;
  h.packet_capacity = 0;  // throughput regime only
  h.epoch_slots = 16;
  return h;
}

// A non-null buffer the conversion never dereferences.
std::byte buffer[16];

void expect_fixed(const L::FixedShape& s, const L::FixedShape& want) {
  EXPECT_EQ(s.stride, want.stride);
  EXPECT_EQ(s.total, want.total);
  EXPECT_EQ(s.ranks, want.ranks);
  EXPECT_EQ(s.empty, want.empty);
}

template <class C, class E, class Op = atom::op::Sum>
struct Converted {
  ShapeTables<C> tables{};
  snac::Args<C, E> args{};
  Result result{};

  Converted(const Call& call, const snac::Handle& h, const snac::Policy& policy = {}) {
    result = make_args<C, E, Op>(call, h, policy, tables, args);
  }
};

Call call_of(Collective c, int type, std::size_t count) {
  Call call;
  call.collective = c;
  call.type = type;
  call.count = count;
  call.input = buffer;
  call.output = buffer;
  return call;
}

TEST(LaunchArgs, ElementBytesFollowNcclDataTypeOrder) {
  const std::size_t want[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int t = 0; t < kElementTypes; ++t) EXPECT_EQ(element_bytes(t), want[t]) << t;
  EXPECT_EQ(element_bytes(-1), 0u);
  EXPECT_EQ(element_bytes(kElementTypes), 0u);
}

TEST(LaunchArgs, PerRankCountsAreUniformAndCopiesCountBytes) {
  const snac::Handle h = handle(1, 4);
  const Converted<L::AllGather, CopyElement> ag(call_of(Collective::all_gather, kFloat, 10), h);
  ASSERT_TRUE(ag.result.ok()) << ag.result.what;
  expect_fixed(ag.args.in_shape, L::FixedShape::uniform(40, 4));
  expect_fixed(ag.args.out_shape, L::FixedShape::uniform(40, 4));

  const Converted<L::AllToAll, CopyElement> a2a(call_of(Collective::all_to_all, kDouble, 3), h);
  ASSERT_TRUE(a2a.result.ok());
  expect_fixed(a2a.args.in_shape, L::FixedShape::uniform(24, 4));

  Call g = call_of(Collective::gather, kBf16, 5);
  g.root = 3;
  const Converted<L::Gather, CopyElement> gather(g, h);
  ASSERT_TRUE(gather.result.ok());
  expect_fixed(gather.args.out_shape, L::FixedShape::uniform(10, 4));
  EXPECT_EQ(gather.args.root, 3);

  const Converted<L::Scatter, CopyElement> scatter(call_of(Collective::scatter, kInt8, 7), h);
  expect_fixed(scatter.args.in_shape, L::FixedShape::uniform(7, 4));

  // A reduction keeps elements.
  const Converted<L::ReduceScatter, float> rs(call_of(Collective::reduce_scatter, kFloat, 10), h);
  ASSERT_TRUE(rs.result.ok());
  expect_fixed(rs.args.in_shape, L::FixedShape::uniform(10, 4));
  EXPECT_EQ(rs.args.input, buffer);
  EXPECT_EQ(rs.args.output, buffer);
}

TEST(LaunchArgs, WholeBufferCountsSplitOnSixteenBytes) {
  const snac::Handle h = handle(0, 3);
  const Converted<L::AllReduce, __nv_bfloat16> ar(call_of(Collective::all_reduce, kBf16, 1000), h);
  ASSERT_TRUE(ar.result.ok());
  expect_fixed(ar.args.in_shape, L::FixedShape::split(1000, 3, 8));
  expect_fixed(ar.args.out_shape, L::FixedShape::split(1000, 3, 8));
  EXPECT_EQ(ar.args.in_shape.stride % 8, 0u);

  const Converted<L::Reduce, double> red(call_of(Collective::reduce, kDouble, 1001), h);
  expect_fixed(red.args.in_shape, L::FixedShape::split(1001, 3, 2));
  // Where its ranks split their workers by what each moves, Reduce gathers to its root (rank 0
  // here), which forms no partition (snac::plans_rank_roles).
  snac::Policy per_rank;
  per_rank.throughput_workers = 16;
  per_rank.rank_roles_min_bytes = 1001 * sizeof(double);
  const Converted<L::Reduce, double> around(call_of(Collective::reduce, kDouble, 1001), h, per_rank);
  expect_fixed(around.args.in_shape, L::FixedShape::split_around(1001, 3, 0, 2));
  const Converted<L::Reduce, double> below(call_of(Collective::reduce, kDouble, 1000), h, per_rank);
  expect_fixed(below.args.in_shape, L::FixedShape::split(1000, 3, 2));

  // Broadcast copies bytes: the whole buffer and the granule are in bytes.
  const Converted<L::Broadcast, CopyElement> bc(call_of(Collective::broadcast, kFloat, 1000), h);
  ASSERT_TRUE(bc.result.ok());
  expect_fixed(bc.args.in_shape, L::FixedShape::split(4000, 3, 16));
  EXPECT_EQ(bc.args.in_shape.stride % 16, 0u);
  EXPECT_EQ(bc.args.in_shape.extent(), 4000u);
}

TEST(LaunchArgs, VTablesAreInlineScaledAndKeepNullDisplacements) {
  const snac::Handle h = handle(2, 3);
  const std::vector<std::size_t> counts = {3, 0, 5};
  Call call = call_of(Collective::all_gather_v, kFloat, 0);
  call.in = {counts.data(), nullptr};

  const Converted<L::AllGatherV, CopyElement> agv(call, h);
  ASSERT_TRUE(agv.result.ok()) << agv.result.what;
  // Both shapes point into the inline tables, not at the caller's array.
  EXPECT_EQ(agv.args.in_shape.counts, agv.tables.in_counts);
  EXPECT_EQ(agv.args.out_shape.counts, agv.tables.out_counts);
  EXPECT_EQ(agv.args.in_shape.displs, nullptr);
  EXPECT_EQ(agv.args.out_shape.displs, nullptr);
  EXPECT_EQ(agv.args.in_shape.ranks, 3);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(agv.args.in_shape.size(k), counts[k] * 4);
    EXPECT_EQ(agv.args.out_shape.size(k), counts[k] * 4);
  }
  EXPECT_EQ(agv.args.out_shape.offset(2), 12u);  // back to back, in bytes
  EXPECT_EQ(agv.args.out_shape.extent(), 32u);

  const std::vector<std::size_t> displs = {20, 0, 7};
  call.in.displs = displs.data();
  const Converted<L::ReduceScatterV, float> rsv(call, h);
  ASSERT_TRUE(rsv.result.ok());
  ASSERT_NE(rsv.args.in_shape.displs, nullptr);
  EXPECT_EQ(rsv.args.in_shape.displs, rsv.tables.in_displs);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(rsv.args.in_shape.offset(k), displs[k]);  // a reduction keeps elements
    EXPECT_EQ(rsv.args.out_shape.offset(k), displs[k]);
    EXPECT_EQ(rsv.args.out_shape.size(k), counts[k]);
  }
  // The tables are copies: the caller's arrays may go away after launch().
  EXPECT_NE(rsv.args.in_shape.counts, counts.data());
}

TEST(LaunchArgs, AllToAllVHasSendAndReceiveTablesAndAnAgreedMaximum) {
  const snac::Handle h = handle(0, 2);
  const std::vector<std::size_t> send = {1, 4}, sdispl = {4, 0}, recv = {1, 6};
  Call call = call_of(Collective::all_to_all_v, kBf16, 0);
  call.input = buffer;
  call.output = buffer + 8;
  call.in = {send.data(), sdispl.data()};
  call.out = {recv.data(), nullptr};
  call.agreed_max = 6;

  const Converted<L::AllToAllV, CopyElement> a(call, h);
  ASSERT_TRUE(a.result.ok()) << a.result.what;
  EXPECT_EQ(a.args.agreed_max_elems, 12u);
  EXPECT_EQ(a.args.in_shape.size(1), 8u);
  EXPECT_EQ(a.args.in_shape.offset(0), 8u);
  EXPECT_EQ(a.args.out_shape.size(1), 12u);
  EXPECT_EQ(a.args.out_shape.displs, nullptr);
  EXPECT_EQ(a.args.out_shape.offset(1), 2u);

  call.agreed_max = 5;  // below this rank's own receive count
  const Converted<L::AllToAllV, CopyElement> low(call, h);
  EXPECT_EQ(low.result.status, snac::Status::bad_argument);
  EXPECT_STREQ(low.result.what, "agreed_max");

  call.agreed_max = 6;
  call.out.counts = nullptr;
  const Converted<L::AllToAllV, CopyElement> missing(call, h);
  EXPECT_STREQ(missing.result.what, "out.counts");
}

TEST(LaunchArgs, RanksBeyondTheInlineTablesAreRefused) {
  const std::vector<std::size_t> counts(kMaxRanks + 1, 1);
  Call call = call_of(Collective::all_gather_v, kInt8, 0);
  call.in = {counts.data(), nullptr};

  const Converted<L::AllGatherV, CopyElement> at_max(call, handle(0, kMaxRanks));
  EXPECT_TRUE(at_max.result.ok());
  EXPECT_EQ(at_max.args.in_shape.extent(), static_cast<std::size_t>(kMaxRanks));

  const Converted<L::AllGatherV, CopyElement> over(call, handle(0, kMaxRanks + 1));
  EXPECT_EQ(over.result.status, snac::Status::bad_argument);
  EXPECT_STREQ(over.result.what, "ranks");
  // Fixed collectives too: kMaxRanks bounds a native communicator.
  const Converted<L::AllReduce, float> fixed(call_of(Collective::all_reduce, kFloat, 8),
                                             handle(0, kMaxRanks + 1));
  EXPECT_STREQ(fixed.result.what, "ranks");
}

TEST(LaunchArgs, PreMulSumScalarComesFromTheLowBytes) {
  const snac::Handle h = handle(0, 2);
  Call call = call_of(Collective::all_reduce, kFloat, 4);
  const float f = 2.5f;
  std::uint32_t fbits = 0;
  std::memcpy(&fbits, &f, sizeof(f));
  call.scalar_bits = 0xdeadbeef00000000ull | fbits;  // high bytes are not the scalar
  const float device_scalar = 0.0f;
  call.scalar_device = &device_scalar;
  const Converted<L::AllReduce, float, atom::op::PreMulSum> pre(call, h);
  ASSERT_TRUE(pre.result.ok());
  EXPECT_EQ(pre.args.op_arg.scalar, 2.5f);
  EXPECT_EQ(pre.args.op_arg.scalar_ptr, &device_scalar);

  call.type = kInt8;
  call.scalar_bits = 0xffffff05u;
  const Converted<L::AllReduce, std::int8_t, atom::op::PreMulSum> i8(call, h);
  EXPECT_EQ(i8.args.op_arg.scalar, 5);

  call.type = kBf16;
  call.scalar_bits = 0x12340000u | 0x3fc0u;  // bf16 1.5
  const Converted<L::AllReduce, __nv_bfloat16, atom::op::PreMulSum> bf(call, h);
  EXPECT_EQ(__bfloat162float(bf.args.op_arg.scalar), 1.5f);

  // Other ops carry no scalar.
  call.type = kFloat;
  const Converted<L::AllReduce, float, atom::op::Sum> sum(call, h);
  EXPECT_EQ(sum.args.op_arg.scalar, 0.0f);
  EXPECT_EQ(sum.args.op_arg.scalar_ptr, nullptr);
}

TEST(LaunchArgs, BadInputNamesTheArgument) {
  const snac::Handle h = handle(1, 2);
  // A reduction on a kernel of another element type.
  const Converted<L::AllReduce, float> type(call_of(Collective::all_reduce, kDouble, 4), h);
  EXPECT_STREQ(type.result.what, "type");
  const Converted<L::AllGather, CopyElement> no_type(call_of(Collective::all_gather, 12, 4), h);
  EXPECT_STREQ(no_type.result.what, "type");

  Call call = call_of(Collective::all_gather, kFloat, 4);
  call.output = nullptr;
  const Converted<L::AllGather, CopyElement> out(call, h);
  EXPECT_STREQ(out.result.what, "output");
  call.count = 0;  // nothing to write: a null buffer is fine
  EXPECT_TRUE((Converted<L::AllGather, CopyElement>(call, h).result.ok()));

  // A non-root's receive buffer is unused by Gather.
  Call gather = call_of(Collective::gather, kFloat, 4);
  gather.output = nullptr;
  gather.root = 0;
  EXPECT_TRUE((Converted<L::Gather, CopyElement>(gather, h).result.ok()));
  gather.root = 1;
  EXPECT_STREQ((Converted<L::Gather, CopyElement>(gather, h).result.what), "output");

  Call huge = call_of(Collective::all_gather, kDouble, std::size_t{1} << 62);
  EXPECT_STREQ((Converted<L::AllGather, CopyElement>(huge, h).result.what), "count");

  Call v = call_of(Collective::all_gather_v, kFloat, 0);
  EXPECT_STREQ((Converted<L::AllGatherV, CopyElement>(v, h).result.what), "in.counts");
}

TEST(LaunchArgs, PlanningVerdictsNameTheirCause) {
  const snac::Policy policy;
  Call call = call_of(Collective::broadcast, kFloat, 100);
  call.root = 2;
  Prepared<L::Broadcast, CopyElement> bad_root;
  const Result r =
      prepare<L::Broadcast, CopyElement, atom::op::Sum>(handle(0, 2), policy, call, bad_root);
  EXPECT_EQ(r.status, snac::Status::bad_argument);
  EXPECT_STREQ(r.what, "root");

  // In place, AllToAll plans (each region's consumer stages its own chunk first).
  Call a2a = call_of(Collective::all_to_all, kFloat, 100);  // input == output
  Prepared<L::AllToAll, CopyElement> in_place;
  EXPECT_TRUE((prepare<L::AllToAll, CopyElement, atom::op::Sum>(handle(0, 2), policy, a2a, in_place).ok()));

  snac::Handle few = handle(0, 2);
  few.epoch_slots = 4;  // AllReduce's default roles take 8 workers
  Prepared<L::AllReduce, float> p;
  const Result w = prepare<L::AllReduce, float, atom::op::Sum>(
      few, policy, call_of(Collective::all_reduce, kFloat, 100), p);
  EXPECT_EQ(w.status, snac::Status::too_many_workers);
  EXPECT_STREQ(w.what, "handle epoch_slots");
}

TEST(LaunchArgs, WorkersComeFromThePlanAndCountZeroPlans) {
  const snac::Policy policy;
  const Call ar = call_of(Collective::all_reduce, kFloat, 0);
  // World size 1 and count 0 still plan: the launch advances epochs like any other.
  Prepared<L::AllReduce, float> p;
  ASSERT_TRUE((prepare<L::AllReduce, float, atom::op::Sum>(handle(0, 1), policy, ar, p).ok()));
  EXPECT_EQ(p.plan.ordinals, 0u);
  const snac::Roles& t = policy.throughput;
  EXPECT_EQ(p.plan.workers(), t.stagers + t.consumers + t.finishers);
  EXPECT_EQ((planned_workers<L::AllReduce, float, atom::op::Sum>(handle(0, 1), policy, ar)),
            p.plan.workers());
  EXPECT_EQ((planned_workers<L::AllGather, CopyElement, atom::op::Sum>(
                handle(0, 4), policy, call_of(Collective::all_gather, kFloat, 1 << 20))),
            t.stagers + t.consumers);
  EXPECT_EQ(
      (planned_workers<L::AllReduce, float, atom::op::Sum>(handle(0, kMaxRanks + 1), policy, ar)),
      0);
}

}  // namespace
}  // namespace purlin::launch

namespace purlin::launch {
namespace {

// One rank: the call is a copy of input region 0 into output region 0, nothing in place.
TEST(LaunchArgs, OneRankIsACopyOfRegionZeroOrNothingInPlace) {
  const snac::Handle h = handle(0, 1);
  std::byte in[256];
  std::byte out[256];
  Call ar = call_of(Collective::all_reduce, kFloat, 10);
  ar.input = in;
  ar.output = out;
  const Converted<L::AllReduce, float> c(ar, h);
  ASSERT_TRUE(c.result.ok());
  LocalCopy copy;
  ASSERT_TRUE(local_copy(c.args, copy).ok());
  EXPECT_EQ(copy.src, in);
  EXPECT_EQ(copy.dst, out);
  EXPECT_EQ(copy.bytes, 40u);

  ar.output = in;  // in place: nothing moves
  const Converted<L::AllReduce, float> same(ar, h);
  ASSERT_TRUE(local_copy(same.args, copy).ok());
  EXPECT_EQ(copy.bytes, 0u);

  Call ag = call_of(Collective::all_gather, kBf16, 5);  // a copy counts bytes
  ag.input = in;
  ag.output = out;
  const Converted<L::AllGather, CopyElement> g(ag, h);
  ASSERT_TRUE(local_copy(g.args, copy).ok());
  EXPECT_EQ(copy.bytes, 10u);

  // AllToAllV: the receive displacement places the block; sizes must agree.
  const std::size_t send[1] = {6};
  const std::size_t recv[1] = {6};
  const std::size_t rdispl[1] = {3};
  Call v = call_of(Collective::all_to_all_v, kFloat, 0);
  v.input = in;
  v.output = out;
  v.in = {send, nullptr};
  v.out = {recv, rdispl};
  v.agreed_max = 6;
  const Converted<L::AllToAllV, CopyElement> a2a(v, h);
  ASSERT_TRUE(a2a.result.ok()) << a2a.result.what;
  ASSERT_TRUE(local_copy(a2a.args, copy).ok());
  EXPECT_EQ(copy.src, in);
  EXPECT_EQ(copy.dst, out + 12);
  EXPECT_EQ(copy.bytes, 24u);

  const std::size_t other[1] = {5};
  v.out = {other, nullptr};
  const Converted<L::AllToAllV, CopyElement> bad(v, h);
  ASSERT_TRUE(bad.result.ok()) << bad.result.what;
  EXPECT_FALSE(local_copy(bad.args, copy).ok());
}

}  // namespace
}  // namespace purlin::launch
