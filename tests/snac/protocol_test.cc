// The protocol's invariants and the plan's decisions, checked directly: regime crossover and
// fallbacks, chunk and ring sizing, epoch advance and parity, flags that never decrease across
// launches of different collectives, back-to-back launches of mixed collectives and regimes
// with no host synchronization, a one-slot ring, and a bounded wait that fails cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "snac/signal_names.h"
#include "specs.h"

namespace purlin::snac::test {
namespace {

namespace L = purlin::layout;

Handle geometry(int ranks, std::size_t staging, std::uint32_t slots, std::size_t packets,
                int workers) {
  Handle h;
  h.ranks = ranks;
  h.staging_bytes = staging;
  h.slots = slots;
  h.packet_capacity = packets;
  h.epoch_slots = workers;
  return h;
}

template <class C>
Args<C, float> fixed_args(std::size_t count, int ranks) {
  Args<C, float> a;
  a.in_shape = a.out_shape = L::FixedShape::uniform(count, ranks);
  return a;
}

// A rooted composition's call of `count` floats over `ranks`, cut around its root as the launch
// bridge cuts it (layout::whole_buffer_shape).
template <class C>
Args<C, float> rooted_args(std::size_t count, int ranks, int root) {
  Args<C, float> a;
  a.root = root;
  a.in_shape = a.out_shape = L::whole_buffer_shape<C>(count, ranks, root, 4, false);
  return a;
}

TEST(Plan, RegimeFollowsTheCrossoverAndThePacketCapacity) {
  Policy p;
  p.latency_max_bytes = 1024;
  const Handle h = geometry(4, 1 << 20, 64, 1024, 16);
  EXPECT_EQ(make_plan(p, h, fixed_args<L::AllGather>(256, 4)).plan.regime, Regime::latency);
  EXPECT_EQ(make_plan(p, h, fixed_args<L::AllGather>(257, 4)).plan.regime, Regime::throughput);
  p.latency_max_bytes = 0;  // forces throughput, even for an empty call
  EXPECT_EQ(make_plan(p, h, fixed_args<L::AllGather>(0, 4)).plan.regime, Regime::throughput);
  p.latency_max_bytes = 1 << 20;  // preferred, but 8 KiB of packets cannot carry 16 KiB
  EXPECT_EQ(make_plan(p, h, fixed_args<L::AllGather>(4096, 4)).plan.regime, Regime::throughput);
  const Handle no_packets = geometry(4, 1 << 20, 64, 0, 16);
  EXPECT_EQ(make_plan(p, no_packets, fixed_args<L::AllGather>(1, 4)).plan.regime,
            Regime::throughput);
}

TEST(Plan, LatencyChunksArePacketAligned) {
  Policy p;
  p.latency_max_bytes = 1 << 20;
  p.packet_chunk_bytes = 40;
  const PlanResult r =
      make_plan(p, geometry(2, 4096, 8, 4096, 16), fixed_args<L::AllGather>(100, 2));
  ASSERT_EQ(r.plan.regime, Regime::latency);
  EXPECT_EQ(r.plan.chunking.stride, 48u);
  EXPECT_EQ(r.plan.ordinals, 9u);  // 400 bytes
}

TEST(Plan, ChunkShrinksUntilOneSlotOfEveryPartitionFits) {
  Policy p;
  p.latency_max_bytes = 0;
  p.chunk_bytes = 1 << 20;
  // AllToAll on 4 ranks: a slot holds 4 partitions' chunks; a half is 1000 bytes.
  const PlanResult a2a =
      make_plan(p, geometry(4, 2000, 64, 0, 16), fixed_args<L::AllToAll>(500, 4));
  ASSERT_EQ(a2a.status, Status::ok);
  EXPECT_EQ(a2a.plan.chunking.stride, 248u);  // 1000 / 4 = 250, whole floats
  EXPECT_EQ(a2a.plan.ring.slots, 1u);
  // AllReduce adds the intermediate's stride: 4 + 1 per slot.
  Args<L::AllReduce, float> ar;
  ar.in_shape = ar.out_shape = L::FixedShape::split(4000, 4, 4);
  const PlanResult comp = make_plan(p, geometry(4, 2000, 64, 0, 16), ar);
  EXPECT_EQ(comp.plan.chunking.stride, 200u);
  EXPECT_EQ(comp.plan.ordinals, 20u);  // 1000 floats per partition
  // The ring never has more slots than the signal arrays.
  p.chunk_bytes = 64;
  const PlanResult capped =
      make_plan(p, geometry(1, 1 << 20, 3, 0, 16), fixed_args<L::AllGather>(1 << 16, 1));
  EXPECT_EQ(capped.plan.ring.slots, 3u);
}

TEST(Plan, RejectsWhatCannotRun) {
  Policy p;
  p.latency_max_bytes = 0;
  EXPECT_EQ(make_plan(p, geometry(4, 8, 64, 0, 16), fixed_args<L::AllToAll>(10, 4)).status,
            Status::staging_too_small);
  Policy odd_team = p;
  odd_team.throughput = {3, 4, 2, 2};
  EXPECT_EQ(
      make_plan(odd_team, geometry(4, 1 << 16, 64, 0, 16), fixed_args<L::AllGather>(10, 4)).status,
      Status::bad_policy);
  EXPECT_EQ(make_plan(p, geometry(4, 1 << 16, 64, 0, 5), fixed_args<L::AllGather>(10, 4)).status,
            Status::too_many_workers);
  Args<L::Gather, float> g = fixed_args<L::Gather>(10, 4);
  g.root = 4;
  EXPECT_EQ(make_plan(p, geometry(4, 1 << 16, 64, 0, 16), g).status, Status::bad_argument);
}

TEST(Plan, OrdinalsComeFromTheLargestPartitionAnywhere) {
  Policy p;
  p.latency_max_bytes = 0;
  p.chunk_bytes = 64;
  const std::size_t send[] = {0, 3};
  const std::size_t recv[] = {1, 0};
  Args<L::AllToAllV, float> a;
  a.in_shape = {send, nullptr, 2};
  a.out_shape = {recv, nullptr, 2};
  EXPECT_EQ(make_plan(p, geometry(2, 1 << 16, 64, 0, 16), a).plan.ordinals, 1u);
  a.agreed_max_elems = 100;  // another rank sends 100 floats: 400 bytes, 7 chunks
  EXPECT_EQ(make_plan(p, geometry(2, 1 << 16, 64, 0, 16), a).plan.ordinals, 7u);
}

// A worker budget splits by the bytes each group moves per chunk ordinal: an AllGather stages
// one partition and copies n, an AllToAll stages and copies n, a reduction reads n + 1.
TEST(Plan, BalancedRolesFollowTheBytesEachGroupMoves) {
  auto same = [](const Roles& a, const Roles& b) {
    return a.stagers == b.stagers && a.consumers == b.consumers && a.finishers == b.finishers &&
           a.team == b.team;
  };
  EXPECT_TRUE(same(balanced_roles<L::AllGather>(16, 8), Roles{2, 14, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllToAll>(16, 8), Roles{8, 8, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::ReduceScatter>(16, 8), Roles{10, 6, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllReduce>(16, 8), Roles{6, 4, 6, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllGather>(66, 2), Roles{22, 44, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllReduce>(3, 32), Roles{1, 1, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllGather>(2, 1), Roles{1, 1, 1, 1}));
  // Zero-copy stagers copy nothing: one per 4 input partitions publishes, the rest of the
  // budget consumes.
  EXPECT_TRUE(same(balanced_roles<L::AllToAll>(16, 8, true), Roles{2, 14, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllToAll>(16, 4, true), Roles{1, 15, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllGather>(16, 8, true), Roles{1, 15, 1, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllReduce>(16, 8, true), Roles{2, 5, 9, 1}));
  EXPECT_TRUE(same(balanced_roles<L::AllToAll>(2, 8, true), Roles{1, 1, 1, 1}));
  // Every worker is used, every group has one, at every budget and world size.
  for (int n : {1, 2, 3, 8, 64}) {
    for (int b = 3; b <= 40; ++b) {
      const Roles r = balanced_roles<L::AllReduce>(b, n);
      EXPECT_EQ(r.stagers + r.consumers + r.finishers, b) << n << " " << b;
      EXPECT_GE(std::min({r.stagers, r.consumers, r.finishers}), 1);
      const Roles g = balanced_roles<L::Gather>(b, n);
      EXPECT_EQ(g.stagers + g.consumers, b) << n << " " << b;
    }
  }
  // make_plan uses it in the throughput regime only.
  Policy p;
  p.throughput_workers = 16;
  p.latency_max_bytes = 0;
  Args<L::AllToAll, float> a = fixed_args<L::AllToAll>(8 * 1000, 8);
  const PlanResult planned = make_plan(p, geometry(8, 1 << 20, 64, 0, 16), a);
  ASSERT_EQ(planned.status, Status::ok);
  EXPECT_TRUE(same(planned.plan.roles, Roles{8, 8, 1, 1}));
  EXPECT_FALSE(planned.plan.zero_copy);
  Handle visible = geometry(8, 1 << 20, 64, 0, 16);
  visible.inputs_peer_visible = true;
  const PlanResult direct = make_plan(p, visible, a);
  ASSERT_EQ(direct.status, Status::ok);
  EXPECT_TRUE(direct.plan.zero_copy);
  EXPECT_TRUE(same(direct.plan.roles, Roles{2, 14, 1, 1}));
  // PreMulSum scales while staging: it plans staged, with stagers to do it.
  const PlanResult scaled = make_plan(policy_for_op<op::PreMulSum>(p), visible, a);
  EXPECT_FALSE(scaled.plan.zero_copy);
  EXPECT_TRUE(same(scaled.plan.roles, Roles{8, 8, 1, 1}));
  p.zero_copy = false;
  EXPECT_FALSE(make_plan(p, visible, a).plan.zero_copy);
}

// Fixed shapes: each rank weighs the elements it really moves. Reduce's root forms no
// partition (whole_buffer_shape) and gives its consumers' share to the gather; the other ranks
// gather nothing and give it to the reduction. Broadcast's non-roots stage nothing. The chunk
// and ring come from every rank's roles, so they agree.
TEST(Plan, RankRolesFollowTheElementsEachRankMoves) {
  auto same = [](const Roles& a, const Roles& b) {
    return a.stagers == b.stagers && a.consumers == b.consumers && a.finishers == b.finishers &&
           a.team == b.team;
  };
  Policy p;
  p.throughput_workers = 16;
  p.latency_max_bytes = 0;
  p.rank_roles_min_bytes = 7 * 4096 * sizeof(float);
  Handle h = geometry(8, 1 << 20, 64, 0, 16);
  h.inputs_peer_visible = true;
  Args<L::Reduce, float> red;
  red.root = 3;
  red.in_shape = red.out_shape =
      L::whole_buffer_shape<L::Reduce>(7 * 4096, 8, red.root, 4, /*around_root=*/true);
  EXPECT_EQ(red.in_shape.size(3), 0u);
  EXPECT_TRUE(same(rank_roles<L::Reduce>(16, 3, 8, red, true), Roles{2, 1, 13, 1}));
  EXPECT_TRUE(same(rank_roles<L::Reduce>(16, 0, 8, red, true), Roles{2, 13, 1, 1}));
  Args<L::Broadcast, float> bc;
  bc.root = 0;
  bc.in_shape = bc.out_shape = L::whole_buffer_shape<L::Broadcast>(8 * 4096, 8, 0, 4, true);
  const Roles off_root = rank_roles<L::Broadcast>(16, 5, 8, bc, true);
  EXPECT_EQ(off_root.stagers, 1);
  EXPECT_GT(rank_roles<L::Broadcast>(16, 0, 8, bc, true).stagers, off_root.stagers);
  // Every rank of a call, root or not, plans the same chunking and ring.
  PlanResult first{};
  for (int r = 0; r < 8; ++r) {
    h.rank = r;
    const PlanResult planned = make_plan(p, h, red);
    ASSERT_EQ(planned.status, Status::ok);
    const Roles& roles = planned.plan.roles;
    EXPECT_EQ(roles.stagers + roles.consumers + roles.finishers, 16);
    if (r == 0) first = planned;
    EXPECT_EQ(planned.plan.chunking.stride, first.plan.chunking.stride) << r;
    EXPECT_EQ(planned.plan.ring.slots, first.plan.ring.slots) << r;
    EXPECT_EQ(planned.plan.ordinals, first.plan.ordinals) << r;
  }
  // Below Policy::rank_roles_min_bytes every rank takes the same balanced roles, and only
  // rooted compositions ever split per rank.
  p.rank_roles_min_bytes += 1;
  EXPECT_FALSE(plans_rank_roles<L::Reduce>(p, 7 * 4096 * sizeof(float)));
  EXPECT_TRUE(plans_rank_roles<L::Reduce>(p, 8 * 4096 * sizeof(float)));
  EXPECT_FALSE(plans_rank_roles<L::AllReduce>(p, std::size_t{1} << 40));
  EXPECT_FALSE(plans_rank_roles<L::Gather>(p, std::size_t{1} << 40));
  Args<L::Reduce, float> even = red;
  even.in_shape = even.out_shape = L::whole_buffer_shape<L::Reduce>(7 * 4096, 8, red.root, 4, false);
  EXPECT_EQ(even.in_shape.size(3), even.in_shape.size(0));
  for (int r : {0, 3}) {
    h.rank = r;
    const PlanResult planned = make_plan(p, h, even);
    ASSERT_EQ(planned.status, Status::ok);
    EXPECT_TRUE(same(planned.plan.roles, balanced_roles<L::Reduce>(16, 8, true))) << r;
  }
}

// Latency roles are a ceiling cut to the items a rank has: off the root, Broadcast's stagers
// and Reduce's one-hop consumers have none and keep one worker each, while the root and every
// rank of an unrooted call keep theirs.
TEST(Plan, LatencyGroupsWithoutItemsKeepOneWorker) {
  Policy p;
  p.latency = Roles{4, 10, 2, 1};
  Handle h = geometry(8, 1 << 20, 64, 1 << 16, 16);
  const Args<L::Broadcast, float> bc = rooted_args<L::Broadcast>(2048, 8, 2);
  const Args<L::Reduce, float> red = rooted_args<L::Reduce>(2048, 8, 2);
  for (int r = 0; r < 8; ++r) {
    h.rank = r;
    const PlanResult b = make_plan(p, h, bc);
    ASSERT_EQ(b.status, Status::ok);
    ASSERT_EQ(b.plan.regime, Regime::latency);
    EXPECT_EQ(b.plan.roles.stagers == 1, r != bc.root) << r;
    EXPECT_GT(b.plan.roles.consumers, 0) << r;
    const PlanResult d = make_plan(p, h, red);
    ASSERT_EQ(d.status, Status::ok);
    ASSERT_TRUE(d.plan.one_hop);
    EXPECT_GT(d.plan.roles.stagers, 1) << r;
    EXPECT_EQ(d.plan.roles.consumers == 1, r != red.root) << r;
  }
}

// One-hop Broadcast's ranks split the latency ceiling (here 16 workers) by the packets each
// group moves, capped at its items: the root pushes its 64 KiB to eight readers and copies
// once, the others only copy. Reduce keeps the ceiling, cut to its items.
TEST(Plan, OneHopBroadcastRolesFollowThePacketsEachRankMoves) {
  Policy p;
  p.latency = Roles{4, 10, 2, 1};
  Handle h = geometry(8, 1 << 20, 64, 1 << 16, 16);
  const Args<L::Broadcast, float> bc = rooted_args<L::Broadcast>(16384, 8, 5);
  const Args<L::Reduce, float> red = rooted_args<L::Reduce>(16384, 8, 5);
  for (int r = 0; r < 8; ++r) {
    h.rank = r;
    const PlanResult b = make_plan(p, h, bc);
    ASSERT_EQ(b.status, Status::ok);
    ASSERT_TRUE(b.plan.one_hop);
    ASSERT_EQ(b.plan.ordinals, 2u);  // 8 KiB partitions in 4 KiB chunks
    // Root: 16 items (2 ordinals x 8 partitions) of 8 pushes, 2 of one copy; others copy.
    EXPECT_EQ(b.plan.roles, r == bc.root ? (Roles{14, 2, 1, 1}) : (Roles{1, 2, 1, 1})) << r;
    const PlanResult d = make_plan(p, h, red);
    ASSERT_EQ(d.status, Status::ok);
    ASSERT_TRUE(d.plan.one_hop);
    EXPECT_EQ(d.plan.roles, r == red.root ? (Roles{4, 12, 1, 1}) : (Roles{4, 1, 1, 1})) << r;
  }
}

// A throughput payload of fewer chunks than a group has workers (the chunk stays at least
// Policy::spread_min_bytes) gives each item a team, and the teams take every worker.
TEST(Plan, ItemsFewerThanWorkersShareTheirChunks) {
  Policy p;
  p.throughput_workers = 16;
  p.latency_max_bytes = 0;
  Handle h = geometry(8, 32 << 20, 64, 0, 16);
  h.inputs_peer_visible = true;
  // 8 KiB partitions: one ordinal, one packed region for 14 consumers.
  const PlanResult rs = make_plan(p, h, fixed_args<L::ReduceScatter>(2048, 8));
  ASSERT_EQ(rs.status, Status::ok);
  ASSERT_EQ(rs.plan.ordinals, 1u);
  ASSERT_EQ(rs.plan.roles.consumers, 14);
  EXPECT_EQ(rs.plan.group_teams(0), rs.plan.roles.stagers);  // 8 items for 2 stagers
  EXPECT_EQ(rs.plan.group_teams(1), 1);
  std::vector<int> members;
  for (int w = 0; w < rs.plan.workers(); ++w) {
    const Role role = rs.plan.role(w);
    if (role.group != 1) continue;
    EXPECT_EQ(role.team, 0);
    EXPECT_EQ(role.size, 14);
    members.push_back(role.member);
  }
  std::sort(members.begin(), members.end());
  for (int m = 0; m < 14; ++m) EXPECT_EQ(members[static_cast<std::size_t>(m)], m);
  // Three ranks' AllGather, one ordinal: three items for the consumers, split into three
  // teams whose sizes differ by at most one.
  Args<L::AllGather, float> ag = fixed_args<L::AllGather>(1024, 3);
  const PlanResult three = make_plan(p, geometry(3, 32 << 20, 64, 0, 16), ag);
  ASSERT_EQ(three.status, Status::ok);
  ASSERT_EQ(three.plan.ordinals, 1u);
  const int consumers = three.plan.roles.consumers;
  ASSERT_GT(consumers, 3);
  EXPECT_EQ(three.plan.group_teams(1), 3);
  std::vector<std::vector<int>> teams(3);
  std::vector<int> sizes(3, 0);
  for (int w = 0; w < three.plan.workers(); ++w) {
    const Role role = three.plan.role(w);
    if (role.group != 1) continue;
    ASSERT_LT(role.team, 3);
    EXPECT_GE(role.size, consumers / 3);
    EXPECT_LE(role.size, consumers / 3 + 1);
    teams[static_cast<std::size_t>(role.team)].push_back(role.member);
    sizes[static_cast<std::size_t>(role.team)] = role.size;
  }
  int covered = 0;
  for (std::size_t i = 0; i < teams.size(); ++i) {
    const std::vector<int>& t = teams[i];
    EXPECT_EQ(static_cast<int>(t.size()), sizes[i]);  // every member agrees on its team's size
    for (std::size_t m = 0; m < t.size(); ++m) EXPECT_EQ(t[m], static_cast<int>(m));
    covered += static_cast<int>(t.size());
  }
  EXPECT_EQ(covered, consumers);
  // Enough chunks: teams of one, as the policy says; off: teams of one too.
  const PlanResult large = make_plan(p, h, fixed_args<L::ReduceScatter>(1 << 20, 8));
  ASSERT_EQ(large.status, Status::ok);
  EXPECT_EQ(large.plan.group_teams(1), large.plan.roles.consumers);
  p.share_items = false;
  EXPECT_EQ(make_plan(p, h, fixed_args<L::ReduceScatter>(2048, 8)).plan.group_teams(1), 14);
}

// Chunks are cut for every team only where ordinals pipeline through a staged hop: a single
// phase read in place keeps whole chunks (its teams share them), staged inputs and a
// composition's intermediate are cut.
TEST(Plan, ChunksAreCutForTeamsOnlyWhereAStagedHopPipelines) {
  Policy p;
  p.throughput_workers = 16;
  p.latency_max_bytes = 0;
  p.chunk_bytes = 1 << 20;
  p.min_ring_slots = 4;  // the sm_90 row's
  Handle direct = geometry(8, 32 << 20, 64, 0, 16);
  direct.inputs_peer_visible = true;
  const Handle staged = geometry(8, 32 << 20, 64, 0, 16);
  // 1 MiB partitions of floats: a 16 MiB half holds 4 slots of 8 strides of 512 KiB.
  const auto rs = fixed_args<L::ReduceScatter>(1 << 18, 8);
  const PlanResult in_place = make_plan(p, direct, rs);
  ASSERT_EQ(in_place.status, Status::ok);
  EXPECT_EQ(in_place.plan.chunking.stride, std::size_t{512} << 10);
  EXPECT_EQ(in_place.plan.ordinals, 2u);
  EXPECT_EQ(in_place.plan.group_teams(1), 2);
  const PlanResult copied = make_plan(p, staged, rs);
  ASSERT_EQ(copied.status, Status::ok);
  EXPECT_LT(copied.plan.chunking.stride, std::size_t{512} << 10);
  EXPECT_GE(copied.plan.ordinals, static_cast<std::uint64_t>(copied.plan.roles.consumers));
  // A composition cuts its chunks even when its first phase reads in place.
  const PlanResult composed = make_plan(p, direct, fixed_args<L::AllReduce>(8 << 18, 8));
  ASSERT_EQ(composed.status, Status::ok);
  EXPECT_GT(composed.plan.ordinals, 2u);
  // Off, nothing is cut for teams anywhere.
  p.spread_teams = false;
  const PlanResult whole = make_plan(p, staged, rs);
  ASSERT_EQ(whole.status, Status::ok);
  EXPECT_EQ(whole.plan.chunking.stride, std::size_t{512} << 10);
}

TEST(Plan, TeamSharesCoverAChunkOnSixteenByteBoundaries) {
  for (std::size_t bytes : {0u, 1u, 15u, 16u, 17u, 100u, 4096u}) {
    for (int parts : {1, 2, 3, 7}) {
      std::size_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const Share s = team_share(bytes, parts, i);
        EXPECT_EQ(s.begin, next);
        EXPECT_TRUE(s.begin % 16 == 0 || s.size == 0);
        next = s.begin + s.size;
      }
      EXPECT_EQ(next, bytes);
    }
  }
}

// Each launch advances every epoch slot of every rank by the same odd amount, so the staging
// half alternates; the host synchronizes between these launches only to look.
TEST(Protocol, EpochsAdvanceByAnOddAmountAndAlternateHalves) {
  const int n = 3;
  HostWorld world(test_world(n));
  Epoch expected = 0;
  for (int i = 0; i < 4; ++i) {
    RunSetup s;
    s.team = 1 + i % 2;  // 4 then 8 workers: slots a launch does not use advance as well
    const auto call = prepare(all_gather<float>(n, 40 + i), s, 7 + static_cast<std::uint64_t>(i));
    const PlanResult planned = call->plan(world);
    ASSERT_EQ(planned.status, Status::ok);
    ASSERT_EQ(
        world.run(1, [&](int r, int, const HostBackend& be) { return call->launch(world, r, be); }),
        Status::ok)
        << world.control().report();
    call->verify(i);
    const Epoch before = expected;
    expected = L::next_epoch(expected, planned.plan.ordinals);
    EXPECT_NE(L::staging_half(before), L::staging_half(expected));
    for (int r = 0; r < n; ++r) {
      for (int w = 0; w < world.config().workers; ++w) {
        EXPECT_EQ(world.handle(r).epochs[w], expected) << "rank " << r << " slot " << w;
      }
    }
  }
}

// Flags, acks and releases only grow, across launches of different collectives and regimes.
TEST(Protocol, SignalWordsNeverDecrease) {
  const int n = 4;
  HostWorld world(test_world(n));
  std::vector<std::unique_ptr<Call>> calls;
  RunSetup tp;
  RunSetup lat;
  lat.regime = Regime::latency;
  calls.push_back(prepare(all_reduce<float, op::Sum>(n, 1201), tp, 1));
  calls.push_back(prepare(all_gather<std::uint8_t>(n, 101), tp, 2));
  calls.push_back(prepare(all_to_all<double>(n, 33), lat, 3));
  calls.push_back(prepare(reduce<std::int64_t, op::Max>(n, 250, 2), tp, 4));
  calls.push_back(prepare(all_reduce<float, op::Sum>(n, 13), lat, 5));
  calls.push_back(prepare(scatter<std::uint64_t>(n, 101, 1), tp, 6));
  const SignalLayout sig = world.handle(0).signal_layout();
  std::vector<std::vector<Flag>> last(n, std::vector<Flag>(sig.words(), 0));
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ASSERT_EQ(world.run(1, [&](int r, int,
                               const HostBackend& be) { return calls[i]->launch(world, r, be); }),
              Status::ok)
        << world.control().report();
    calls[i]->verify(static_cast<int>(i));
    std::size_t raised = 0;
    for (int r = 0; r < n; ++r) {
      const Flag* words = world.handle(r).signals[r];
      for (std::size_t w = 0; w < sig.words(); ++w) {
        ASSERT_GE(words[w], last[r][w]) << "call " << i << " rank " << r << " word " << w;
        raised += words[w] > last[r][w] ? 1 : 0;
        last[r][w] = words[w];
      }
    }
    EXPECT_GT(raised, 0u) << "call " << i << " published nothing";
  }
}

// Different collectives, regimes, team sizes (so worker counts) and chunk sizes (so ring
// geometries) back to back with no host synchronization: ranks drift apart freely.
TEST(Protocol, MixedLaunchesBackToBack) {
  const int n = 4;
  HostWorld world(test_world(n));
  std::vector<std::unique_ptr<Call>> calls;
  RunSetup a;
  RunSetup b;
  b.regime = Regime::latency;
  b.team = 2;
  RunSetup c;
  c.team = 2;
  c.chunk_bytes = 40;
  RunSetup d;
  d.chunk_bytes = 24;
  d.in_place = true;
  calls.push_back(prepare(all_reduce<float, op::Sum>(n, 1201), a, 1));
  calls.push_back(prepare(all_gather_v<float>(n, 9, 1, true), b, 2));
  calls.push_back(prepare(reduce_scatter_v<__nv_bfloat16, op::Sum>(n, 40, 2, false), c, 3));
  calls.push_back(prepare(broadcast<__half>(n, 250, 3), d, 4));
  calls.push_back(prepare(all_to_all_v<std::int32_t>(n, 9, 5), b, 5));
  calls.push_back(prepare(gather<std::int8_t>(n, 101, 1), c, 6));
  calls.push_back(prepare(reduce<std::int64_t, op::Max>(n, 1201, 0), d, 7));
  calls.push_back(prepare(all_to_all<double>(n, 33), a, 8));
  calls.push_back(prepare(all_reduce<__nv_bfloat16, op::Sum>(n, 250), b, 9));
  calls.push_back(prepare(reduce_scatter<std::int32_t, op::Sum>(n, 101), d, 10));
  // Zero-copy between staged launches on the same halves: consumers must follow each
  // launch's published input address, never a stale one.
  RunSetup z = a;
  z.zero_copy = true;
  RunSetup zt = c;
  zt.zero_copy = true;
  calls.push_back(prepare(all_to_all<double>(n, 33), z, 11));
  calls.push_back(prepare(all_reduce<float, op::Sum>(n, 1201), a, 12));
  calls.push_back(prepare(reduce<std::int64_t, op::Max>(n, 1201, 2), zt, 13));
  calls.push_back(prepare(all_gather_v<float>(n, 9, 1, true), z, 14));
  calls.push_back(prepare(gather<std::int8_t>(n, 101, 1), c, 15));
  calls.push_back(prepare(reduce_scatter_v<__nv_bfloat16, op::Sum>(n, 40, 2, false), zt, 16));
  run_calls(world, calls);
}

// Roles may differ between ranks: a one-hop Broadcast's root pushes with more workers than
// rank 0 launches, and the world must run every rank's.
TEST(Protocol, EveryRanksWorkersRunWhenRolesDiffer) {
  const int n = 2;
  HostWorld world(test_world(n));
  RunSetup s;
  s.regime = Regime::latency;
  std::vector<std::unique_ptr<Call>> calls;
  calls.push_back(prepare(broadcast<__half>(n, 13, 1), s, 90));
  ASSERT_GT(calls[0]->workers(world), calls[0]->plan(world).plan.workers());
  run_calls(world, calls);
}

// Zero-copy producers read in place while others stage, in one launch: an in-place AllToAll
// stages its own partitions (engine.h), so in place on rank 0 only mixes both kinds.
TEST(Protocol, ZeroCopyMixesWithStagedProducers) {
  const int n = 3;
  HostWorld world(test_world(n));
  auto spec = all_to_all<double>(n, 101);
  const auto in_place = spec.in_place;
  spec.in_place = [in_place](int r) { return r == 0 ? in_place(r) : std::nullopt; };
  std::vector<std::unique_ptr<Call>> calls;
  for (int team : {1, 2}) {
    RunSetup s;
    s.zero_copy = true;
    s.in_place = true;
    s.team = team;
    calls.push_back(prepare(spec, s, 60 + team));
  }
  run_calls(world, calls);
}

// A zero-copy launch may end only when every peer finished reading its input: each rank
// overwrites its input as soon as all of its workers returned, and the results must still be
// exact (and free of races under ThreadSanitizer).
TEST(Protocol, ZeroCopyInputsOutliveEveryRead) {
  const int n = 4;
  HostWorld world(test_world(n));
  std::vector<std::unique_ptr<Call>> calls;
  RunSetup s;
  s.zero_copy = true;
  RunSetup t = s;
  t.team = 2;
  calls.push_back(prepare(all_gather<float>(n, 1201), s, 71));
  calls.push_back(prepare(all_to_all<double>(n, 101), t, 72));
  calls.push_back(prepare(reduce_scatter<float, op::Sum>(n, 1201), s, 73));
  calls.push_back(prepare(all_reduce<std::int32_t, op::Sum>(n, 1201), t, 74));
  calls.push_back(prepare(broadcast<__half>(n, 250, 3), s, 75));
  calls.push_back(prepare(gather<std::int8_t>(n, 101, 0), t, 76));
  int threads = 1;
  for (const auto& c : calls) threads = std::max(threads, c->workers(world));
  const auto un = static_cast<std::size_t>(n);
  std::vector<std::atomic<int>> returned(calls.size() * un);
  const Status status = world.run(
      static_cast<int>(calls.size()),
      [&](int r, int i, const HostBackend& be) {
        const auto ui = static_cast<std::size_t>(i);
        const Status st = calls[ui]->launch(world, r, be);
        if (returned[ui * un + static_cast<std::size_t>(r)].fetch_add(1) + 1 == threads) {
          calls[ui]->clobber_input(r);
        }
        return st;
      },
      threads);
  ASSERT_EQ(status, Status::ok) << world.control().report();
  for (std::size_t i = 0; i < calls.size(); ++i) calls[i]->verify(static_cast<int>(i));
}

// One slot per half: every chunk after the first waits for the drain ack of its predecessor.
TEST(Protocol, OneSlotRing) {
  const int n = 3;
  HostWorld world(test_world(n, 1));
  std::vector<std::unique_ptr<Call>> calls;
  RunSetup s;
  RunSetup t;
  t.team = 2;
  for (int i = 0; i < 2; ++i) {
    calls.push_back(prepare(all_reduce<float, op::Sum>(n, 1201), i ? t : s, 20 + i));
    calls.push_back(prepare(all_to_all<double>(n, 101), i ? t : s, 30 + i));
    calls.push_back(prepare(gather<std::int8_t>(n, 101, 2), i ? t : s, 40 + i));
    calls.push_back(
        prepare(reduce_scatter_v<__nv_bfloat16, op::Sum>(n, 40, 3, true), i ? t : s, 50 + i));
  }
  run_calls(world, calls);
}

// A rank that never launches must not hang the others: their waits time out, the world
// aborts, and the report says who waited for what.
TEST(Protocol, MissingPeerTimesOutWithAReport) {
  HostWorldConfig cfg = test_world(2);
  cfg.timeout = std::chrono::milliseconds(200);
  HostWorld world(cfg);
  RunSetup s;
  const auto call = prepare(all_gather<float>(2, 100), s, 1);
  const auto start = std::chrono::steady_clock::now();
  const Status status = world.run(1, [&](int r, int, const HostBackend& be) {
    return r == 0 ? call->launch(world, r, be) : Status::ok;
  });
  EXPECT_EQ(status, Status::aborted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const std::string report = world.control().report();
  EXPECT_NE(report.find("timed out"), std::string::npos) << report;
  EXPECT_NE(report.find("rank 0"), std::string::npos) << report;
  // The report names the word that starved (signal_names.h), not an address. Which wait
  // gives up first depends on scheduling: a consumer's flag from rank 1, a stager's ack from
  // rank 1, or rank 0's own flag of a chunk its stager could not publish for lack of acks.
  EXPECT_NE(report.find(" from rank "), std::string::npos) << report;
  EXPECT_NE(report.find("(phase 0, "), std::string::npos) << report;
  EXPECT_EQ(report.find("outside the rank's"), std::string::npos) << report;
}

// The names a stall report gives are the inverse of the layouts' indices.
TEST(Protocol, SignalAndPacketNamesInvertTheLayouts) {
  const SignalLayout sl{3, 4};
  EXPECT_EQ(name_signal(sl, sl.flag(1, 2, 3)), "flag from rank 2 (phase 1, slot 3)");
  EXPECT_EQ(name_signal(sl, sl.ack(0, 1, 1, 2)), "ack from rank 1 (phase 0, half 1, slot 2)");
  EXPECT_EQ(name_signal(sl, sl.ack(1, 2, 0, 0)), "ack from rank 2 (phase 1, half 0, slot 0)");
  EXPECT_EQ(name_signal(sl, sl.release(2, 1)), "release of half 1 from rank 2");
  EXPECT_EQ(name_signal(sl, sl.input_address(1, 0)), "input address from rank 1 (half 0)");
  EXPECT_NE(name_signal(sl, sl.words()).find("past the"), std::string::npos);
  const PacketLayout pl{3, 10};
  EXPECT_EQ(name_packet(pl, pl.index(1, 0, 2, 7)), "packet 7 from rank 2 (phase 1, half 0)");
  EXPECT_EQ(name_packet(pl, pl.index(0, 1, 0, 0)), "packet 0 from rank 0 (phase 0, half 1)");
  EXPECT_NE(name_packet(pl, pl.packets()).find("past the"), std::string::npos);

  std::vector<Flag> signals(sl.words());
  std::vector<Packet> packets(pl.packets());
  const auto at = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  EXPECT_EQ(name_polled_word(sl, pl, at(signals.data()), at(packets.data()),
                             at(&signals[sl.release(0, 1)])),
            "release of half 1 from rank 0");
  EXPECT_EQ(name_polled_word(sl, pl, at(signals.data()), at(packets.data()),
                             at(&packets[pl.index(0, 0, 1, 3)].flag)),
            "packet 3 from rank 1 (phase 0, half 0)");
  EXPECT_NE(name_polled_word(sl, pl, at(signals.data()), at(packets.data()), 16).find("outside"),
            std::string::npos);
}

// In place, the packed side already sits where the self copy would put it: on one rank nothing
// is staged, flagged or acknowledged at all, and the result is still checked.
template <class C, class E, class Op>
void expect_self_copy_skipped(const Spec<C, E, Op>& spec) {
  for (bool in_place : {false, true}) {
    HostWorld world(test_world(1));
    RunSetup s;
    s.in_place = in_place;
    std::vector<std::unique_ptr<Call>> calls;
    calls.push_back(prepare(spec, s, 3));
    run_calls(world, calls);
    const SignalLayout sig = world.handle(0).signal_layout();
    const Flag* words = world.handle(0).signals[0];
    const bool flagged = std::any_of(words, words + sig.ack(0, 0, 0, 0), [](Flag f) { return f; });
    EXPECT_EQ(flagged, !in_place) << (in_place ? "in place" : "out of place");
  }
}

TEST(Protocol, InPlaceSelfCopyIsSkipped) {
  expect_self_copy_skipped(all_gather<float>(1, 101));
  expect_self_copy_skipped(gather<std::int8_t>(1, 101, 0));
  expect_self_copy_skipped(scatter<std::uint64_t>(1, 101, 0));
}

// In place, an AllToAllV needs each receive partition to be the send partition it replaces;
// otherwise the call has no meaning and is refused before anything runs.
TEST(Protocol, InPlaceAllToAllVWithUnequalPartitionsIsRejected) {
  const int n = 2;
  VMatrix m(n, 3, 0, /*symmetric=*/false);
  ASSERT_NE(m.send[0], m.recv[0]);
  HostWorld world(test_world(n));
  std::vector<std::int32_t> buf(64);
  Args<L::AllToAllV, std::int32_t> a;
  a.in_shape = {m.send[0].data(), m.sdispl[0].data(), n};
  a.out_shape = {m.recv[0].data(), m.rdispl[0].data(), n};
  a.agreed_max_elems = m.max;
  a.input = a.output = buf.data();
  EXPECT_EQ(make_plan(Policy{}, world.handle(0), a).status, Status::bad_argument);
  a.output = buf.data() + 32;
  EXPECT_EQ(make_plan(Policy{}, world.handle(0), a).status, Status::ok);
}

}  // namespace
}  // namespace purlin::snac::test
