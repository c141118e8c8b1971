// Policy selection on the host: the table, the co-residency clamp for ranks sharing a GPU, the
// environment overrides, and that every selected policy plans (no bad_policy, enough epoch
// slots) for the largest role set, a composition.
#include <algorithm>
#include <gtest/gtest.h>

#include <vector>
#include <stdlib.h>

#include "layout/collectives.h"
#include "policy/policy.h"
#include "policy/table.h"
#include "snac/planner.h"

namespace purlin::policy {
namespace {

namespace L = purlin::layout;

constexpr const char* kVariables[] = {"PURLIN_CHUNK_BYTES", "PURLIN_PACKET_CHUNK_BYTES",
                                      "PURLIN_LATENCY_MAX_BYTES", "PURLIN_ROLES",
                                      "PURLIN_LATENCY_ROLES", "PURLIN_RING_SLOTS",
                                      "PURLIN_SPREAD_MIN_BYTES", "PURLIN_RANK_ROLES_MIN_BYTES",
                                      "PURLIN_ZERO_COPY", "PURLIN_SHARE_ITEMS",
                                      "PURLIN_SPREAD_TEAMS",
                                      "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"};

class PolicyTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* v : kVariables) ::unsetenv(v);
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }
};

bool same_roles(const snac::Roles& a, const snac::Roles& b) {
  return a.stagers == b.stagers && a.consumers == b.consumers && a.finishers == b.finishers &&
         a.team == b.team;
}

int total(const snac::Roles& r) { return r.stagers + r.consumers + r.finishers; }

// An n-rank collective C of `floats` per partition planned with `p` on a handle sized as
// DeviceState sizes it.
template <class C>
snac::PlanResult plan_result(const snac::Policy& p, int ranks, std::size_t floats) {
  snac::Handle h;
  h.ranks = ranks;
  h.staging_bytes = 32u << 20;
  h.slots = 64;
  h.packet_capacity = (64u << 10) / 8;
  h.epoch_slots = max_workers(p);
  snac::Args<C, float> a;
  a.in_shape = a.out_shape = L::FixedShape::uniform(floats, ranks);
  return snac::make_plan(p, h, a);
}

snac::PlanResult plan_all_reduce_result(const snac::Policy& p, int ranks, std::size_t floats) {
  return plan_result<L::AllReduce>(p, ranks, floats);
}

snac::Status plan_all_reduce(const snac::Policy& p, int ranks, std::size_t floats) {
  return plan_all_reduce_result(p, ranks, floats).status;
}

TEST_F(PolicyTest, H200RowIsSnacsDefault) {
  const snac::Policy t = table_policy(9);
  const snac::Policy d{};
  EXPECT_EQ(t.chunk_bytes, d.chunk_bytes);
  EXPECT_EQ(t.packet_chunk_bytes, d.packet_chunk_bytes);
  EXPECT_EQ(t.latency_max_bytes, d.latency_max_bytes);
  EXPECT_EQ(t.one_hop_max_bytes, d.one_hop_max_bytes);
  EXPECT_TRUE(same_roles(t.throughput, d.throughput));
  EXPECT_TRUE(same_roles(t.latency, d.latency));
}

TEST_F(PolicyTest, RowsCoverEveryArchitecture) {
  EXPECT_EQ(row_for(7).sm_major, 8);  // older than the table: its first row
  EXPECT_EQ(row_for(8).sm_major, 8);
  EXPECT_EQ(row_for(10).sm_major, 10);
  EXPECT_EQ(row_for(12).sm_major, 10);  // newer: the last row at or below
  EXPECT_EQ(table_policy(8).chunk_bytes, 128u * 1024);
  EXPECT_EQ(total(table_policy(10).throughput), 16);  // B200: 761 GB/s with 16 CTAs
  for (const Row& r : kTable) {
    for (const snac::Roles& roles : {r.throughput, r.latency}) {
      EXPECT_GE(roles.team, 1);
      EXPECT_EQ(roles.stagers % roles.team, 0);
      EXPECT_EQ(roles.consumers % roles.team, 0);
      EXPECT_EQ(roles.finishers % roles.team, 0);
    }
    EXPECT_GE(r.chunk_bytes, 16u);
    EXPECT_GE(r.shared_chunk_bytes, 16u);
    EXPECT_GE(r.shared_workers, 3) << "one worker per role group of a composition";
    EXPECT_LE(r.latency_max_bytes, 64u * 1024) << "beyond the default packet buffer";
  }
}

TEST_F(PolicyTest, OneRankPerGpuKeepsTheTable) {
  const Facts f{9, 132, 8, 1};
  const snac::Policy p = select(f);
  EXPECT_TRUE(same_roles(p.throughput, snac::Roles{2, 4, 2, 1}));
  EXPECT_TRUE(same_roles(p.latency, snac::Roles{8, 6, 2, 1}));
  EXPECT_EQ(p.throughput_workers, 0);
  EXPECT_EQ(p.rank_roles_min_bytes, 0u);  // fixed roles never split per rank
  EXPECT_EQ(p.chunk_bytes, table_policy(9).chunk_bytes);
  EXPECT_EQ(p.latency_max_bytes, table_policy(9).latency_max_bytes);  // NVLink's crossover
  EXPECT_TRUE(coresident(p, f));
  EXPECT_EQ(max_workers(p), 16);
}

TEST_F(PolicyTest, RanksSharingAGpuSplitTheirShareOfTheSms) {
  const Facts f{9, 132, 8, 8};  // 16 SMs per rank
  const snac::Policy p = select(f);
  EXPECT_EQ(p.throughput_workers, 16);
  EXPECT_EQ(p.chunk_bytes, row_for(9).shared_chunk_bytes);
  EXPECT_TRUE(same_roles(p.latency, snac::Roles{8, 6, 2, 1}));
  EXPECT_EQ(p.latency_max_bytes, row_for(9).shared_latency_max_bytes);
  EXPECT_EQ(p.rank_roles_min_bytes, row_for(9).shared_rank_roles_min_bytes);
  EXPECT_GT(p.rank_roles_min_bytes, 0u);
  EXPECT_TRUE(coresident(p, f));
  EXPECT_EQ(max_workers(p), 16);
  EXPECT_EQ(plan_all_reduce(p, 8, 1 << 20), snac::Status::ok);
  // 1 MiB chunks of 9 strides fill a 16 MiB half once; the table's depth shrinks them.
  const snac::Plan deep = plan_all_reduce_result(p, 8, 64 << 20).plan;
  EXPECT_GE(deep.ring.slots, row_for(9).min_ring_slots);
  EXPECT_LT(deep.chunking.stride, row_for(9).shared_chunk_bytes);
  EXPECT_EQ(deep.chunking.stride % 4096, 0u);
  // Without the table's depth the ring is still as deep as the launch's teams need: the
  // ReduceScatter consumers of an AllReduce share one output region.
  snac::Policy shallow = p;
  shallow.min_ring_slots = 1;
  const snac::Plan teams = plan_all_reduce_result(shallow, 8, 64 << 20).plan;
  EXPECT_EQ(teams.ring.slots, static_cast<std::uint64_t>(teams.roles.consumers));
  EXPECT_EQ(teams.ring.slots, snac::ordinals_in_flight<L::AllReduce>(teams.roles, 8));
  // Explicit roles replace the budget.
  set("PURLIN_ROLES", "3,12,1");
  const snac::Policy q = select(f);
  EXPECT_EQ(q.throughput_workers, 0);
  EXPECT_TRUE(same_roles(q.throughput, snac::Roles{3, 12, 1, 1}));
}

// A reduction into one partition keeps every consumer at work, from 1 MiB (128 KiB per
// partition) to 256 MiB. Staged, each consumer team has a chunk of its own in the ring and the
// payload is cut into at most a grain-rounded share per team (but no smaller than
// spread_min_bytes). Read in place, nothing pipelines through a staged hop: the chunks stay
// whole (the ring holds min_ring_slots of them) and the consumers share them as teams.
TEST_F(PolicyTest, EveryReductionConsumerHasWork) {
  const snac::Policy p = select(Facts{9, 132, 8, 8});
  for (const bool in_place : {false, true}) {
    for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20}) {
      snac::Handle h;
      h.ranks = 8;
      h.staging_bytes = 32u << 20;
      h.slots = 64;
      h.packet_capacity = (64u << 10) / 8;
      h.epoch_slots = max_workers(p);
      h.inputs_peer_visible = in_place;
      snac::Args<L::ReduceScatter, float> a;
      a.in_shape = L::FixedShape::split(bytes / sizeof(float), 8);
      a.out_shape = a.in_shape;
      const snac::PlanResult r = snac::make_plan(p, h, a);
      ASSERT_EQ(r.status, snac::Status::ok) << bytes;
      EXPECT_EQ(r.plan.regime, snac::Regime::throughput);
      const auto teams = static_cast<std::uint64_t>(r.plan.roles.consumers / r.plan.roles.team);
      EXPECT_GE(teams, in_place ? 12u : 6u) << bytes;  // staged: stagers copy, and get workers
      const std::size_t part = bytes / 8;
      if (in_place) {
        const std::size_t whole = std::min(p.chunk_bytes, h.staging_bytes / 2 / (8 * p.min_ring_slots));
        EXPECT_EQ(r.plan.chunking.stride, std::min(whole, part)) << bytes;
        EXPECT_GE(r.plan.ring.slots, p.min_ring_slots) << bytes;
        const std::uint64_t items = r.plan.ordinals;  // one packed region per ordinal
        EXPECT_EQ(static_cast<std::uint64_t>(r.plan.group_teams(1)), std::min(teams, items)) << bytes;
        continue;
      }
      EXPECT_GE(r.plan.ring.slots, teams) << bytes;
      // Chunks on the 4 KiB grain: no team waits for more than one grain-rounded share, unless
      // that would be smaller than the policy's smallest spread chunk.
      const std::size_t share = (part / teams + 4095) / 4096 * 4096;
      EXPECT_LE(r.plan.chunking.stride, std::max(share, p.spread_min_bytes)) << bytes;
      if (bytes >= (std::size_t{16} << 20)) {
        EXPECT_GE(r.plan.ordinals, teams) << bytes;
      }
    }
  }
}

TEST_F(PolicyTest, CrowdedGpuShrinksLargestGroupsFirst) {
  // 32 ranks on 132 SMs: 4 CTAs each. {2,4,2} -> {2,3,2} -> {2,2,2} -> {1,2,2} -> {1,2,1}.
  const Facts f{9, 132, 32, 32};
  const snac::Policy p = select(f);
  EXPECT_TRUE(same_roles(p.throughput, snac::Roles{1, 2, 1, 1}));
  EXPECT_TRUE(same_roles(p.latency, snac::Roles{1, 2, 1, 1}));
  EXPECT_EQ(p.throughput_workers, 4);
  EXPECT_TRUE(coresident(p, f));
  EXPECT_EQ(plan_all_reduce(p, 32, 1000), snac::Status::ok);
  EXPECT_EQ(plan_all_reduce(p, 32, 1 << 20), snac::Status::ok);
}

TEST_F(PolicyTest, SixtyFourRanksOnOneGpuClampToOneCtaPerGroup) {
  // Two SMs per rank cannot hold a composition's three groups: the floor is reported.
  const Facts f{9, 132, 64, 64};
  const snac::Policy p = select(f);
  EXPECT_TRUE(same_roles(p.throughput, snac::Roles{1, 1, 1, 1}));
  EXPECT_TRUE(same_roles(p.latency, snac::Roles{1, 1, 1, 1}));
  EXPECT_FALSE(coresident(p, f));
  EXPECT_EQ(plan_all_reduce(p, 64, 100), snac::Status::ok);
  // 44 ranks: exactly 3 each.
  const Facts g{9, 132, 44, 44};
  EXPECT_TRUE(coresident(select(g), g));
}

TEST_F(PolicyTest, ClampResetsTeamsSoSingleStepsStayValid) {
  set("PURLIN_ROLES", "4,8,4,4");
  const Facts roomy{9, 132, 8, 1};
  EXPECT_TRUE(same_roles(select(roomy).throughput, snac::Roles{4, 8, 4, 4}));
  const Facts f{9, 132, 16, 16};  // 8 CTAs per rank
  const snac::Policy p = select(f);
  EXPECT_EQ(p.throughput.team, 1);
  EXPECT_LE(total(p.throughput) * 16, 132);
  EXPECT_EQ(plan_all_reduce(p, 16, 1 << 16), snac::Status::ok);
}

TEST_F(PolicyTest, UnknownSmCountIsNotCoresident) {
  const Facts f{9, 0, 2, 2};
  const snac::Policy p = select(f);
  EXPECT_TRUE(same_roles(p.throughput, snac::Roles{2, 4, 2, 1}));
  EXPECT_FALSE(coresident(p, f));
}

// Ranks compare the policies they selected at creation (runtime's verdict exchange): every
// field, a role of either regime included, must tell two policies apart.
TEST_F(PolicyTest, PoliciesDifferInAnyField) {
  const snac::Policy base = select(Facts{9, 132, 8, 8});
  EXPECT_EQ(base, select(Facts{9, 132, 8, 8}));
  std::vector<snac::Policy> changed(15, base);
  changed[0].chunk_bytes += 1;
  changed[1].packet_chunk_bytes += 1;
  changed[2].latency_max_bytes += 1;
  changed[3].one_hop_max_bytes += 1;
  changed[4].throughput.consumers += 1;
  changed[5].latency.team += 1;
  changed[6].throughput_workers += 1;
  changed[7].min_ring_slots += 1;
  changed[8].spread_min_bytes += 1;
  changed[9].rank_roles_min_bytes += 1;
  changed[10].zero_copy = !base.zero_copy;
  changed[11].latency.stagers += 1;
  changed[12].share_items = !base.share_items;
  changed[13].spread_teams = !base.spread_teams;
  changed[14].check_calls = !base.check_calls;
  for (std::size_t i = 0; i < changed.size(); ++i) EXPECT_FALSE(changed[i] == base) << i;
}

TEST_F(PolicyTest, EnvironmentOverrides) {
  set("PURLIN_CHUNK_BYTES", "131072");
  set("PURLIN_PACKET_CHUNK_BYTES", "0x2000");
  set("PURLIN_LATENCY_MAX_BYTES", "0");
  set("PURLIN_ROLES", "4,8,4");
  set("PURLIN_LATENCY_ROLES", "2,4,2,2");
  set("PURLIN_RING_SLOTS", "2");
  set("PURLIN_ZERO_COPY", "0");
  set("PURLIN_RANK_ROLES_MIN_BYTES", "1048576");
  set("PURLIN_SHARE_ITEMS", "0");
  set("PURLIN_SPREAD_TEAMS", "0");
  const snac::Policy p = select(Facts{9, 132, 8, 1});
  EXPECT_FALSE(p.share_items);
  EXPECT_FALSE(p.spread_teams);
  EXPECT_TRUE(table_policy(9).share_items);
  EXPECT_TRUE(table_policy(9).spread_teams);
  EXPECT_EQ(p.rank_roles_min_bytes, 1048576u);
  EXPECT_EQ(p.min_ring_slots, 2u);
  EXPECT_FALSE(p.zero_copy);
  EXPECT_TRUE(table_policy(9).zero_copy);
  EXPECT_EQ(p.chunk_bytes, 131072u);
  EXPECT_EQ(p.packet_chunk_bytes, 8192u);
  EXPECT_EQ(p.latency_max_bytes, 0u);
  EXPECT_TRUE(same_roles(p.throughput, snac::Roles{4, 8, 4, 1}));
  EXPECT_TRUE(same_roles(p.latency, snac::Roles{2, 4, 2, 2}));
  EXPECT_EQ(max_workers(p), 16);
}

TEST_F(PolicyTest, BadEnvironmentValuesKeepTheTable) {
  const snac::Policy table = table_policy(9);
  for (const char* bad : {"abc", "-5", "8", "12x", ""}) {
    set("PURLIN_CHUNK_BYTES", bad);
    set("PURLIN_PACKET_CHUNK_BYTES", bad);
    EXPECT_EQ(select(Facts{}).chunk_bytes, table.chunk_bytes) << bad;
    EXPECT_EQ(select(Facts{}).packet_chunk_bytes, table.packet_chunk_bytes) << bad;
  }
  for (const char* bad : {"-1", "many", "1e4"}) {
    set("PURLIN_LATENCY_MAX_BYTES", bad);
    EXPECT_EQ(select(Facts{}).latency_max_bytes, table.latency_max_bytes) << bad;
  }
  for (const char* bad : {"0", "-2", "four"}) {
    set("PURLIN_RING_SLOTS", bad);
    EXPECT_EQ(select(Facts{}).min_ring_slots, table.min_ring_slots) << bad;
  }
  for (const char* bad : {"2", "-1", "yes"}) {
    set("PURLIN_ZERO_COPY", bad);
    EXPECT_EQ(select(Facts{}).zero_copy, table.zero_copy) << bad;
  }
  for (const char* bad : {"0,4,2", "2,4", "2,4,2,1,1", "3,4,2,2", "2,,2", "2,4,2,", "a,b,c",
                          "2,4,-2", "600,600,1", "2 ,4,2"}) {
    set("PURLIN_ROLES", bad);
    set("PURLIN_LATENCY_ROLES", bad);
    const snac::Policy p = select(Facts{});
    EXPECT_TRUE(same_roles(p.throughput, table.throughput)) << bad;
    EXPECT_TRUE(same_roles(p.latency, table.latency)) << bad;
  }
}

TEST_F(PolicyTest, ParseRoles) {
  const auto r = parse_roles("3,5,7");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(same_roles(*r, snac::Roles{3, 5, 7, 1}));
  const auto t = parse_roles("2,4,6,2");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->team, 2);
  EXPECT_FALSE(parse_roles("").has_value());
  EXPECT_FALSE(parse_roles("1,1,1,0").has_value());
  EXPECT_FALSE(parse_roles("99999999999,1,1").has_value());
}

// --- CTA bounds: NCCL's minCTAs / maxCTAs and NCCL_MIN_CTAS / NCCL_MAX_CTAS ---------------

constexpr Facts kH200{9, 132, 8, 1};
constexpr int kUndef = -2147483647 - 1;  // NCCL_CONFIG_UNDEF_INT (INT_MIN)
constexpr std::size_t kLargeFloats = 16u << 20;  // 64 MiB per partition: the throughput regime
constexpr std::size_t kSmallFloats = 256;        // 1 KiB: the latency regime

// The CTAs a launch of C with `floats` per partition uses, as the launch bridge plans it.
template <class C = L::AllReduce>
int planned_workers(const snac::Policy& p, std::size_t floats) {
  const snac::PlanResult r = plan_result<C>(p, 8, floats);
  EXPECT_EQ(r.status, snac::Status::ok);
  return r.plan.workers();
}

TEST_F(PolicyTest, MaxCtasCapsEveryLaunch) {
  const snac::Policy p = select(kH200, CtaBounds{0, 5});
  EXPECT_LE(max_workers(p), 5);
  EXPECT_LE(planned_workers(p, kLargeFloats), 5);
  EXPECT_LE(planned_workers(p, kSmallFloats), 5);
  EXPECT_LE(planned_workers<L::AllGather>(p, kLargeFloats), 5);
  EXPECT_LE(planned_workers<L::AllGather>(p, kSmallFloats), 5);
  EXPECT_GT(planned_workers(select(kH200), kSmallFloats), 5) << "the bound must be one that binds";
  EXPECT_GT(planned_workers(select(kH200), kLargeFloats), 5) << "the bound must be one that binds";
}

TEST_F(PolicyTest, MaxCtasCapsASharedGpusBudget) {
  const Facts shared{9, 132, 8, 8};  // 8 ranks on one GPU: a budget of 16 per rank
  ASSERT_GT(select(shared).throughput_workers, 4);
  const snac::Policy p = select(shared, CtaBounds{0, 4});
  EXPECT_EQ(p.throughput_workers, 4);
  EXPECT_EQ(planned_workers(p, kLargeFloats), 4);
  EXPECT_LE(max_workers(p), 4);
}

TEST_F(PolicyTest, MaxCtasBelowACompositionIsClampedNotFailed) {
  const snac::Policy p = select(kH200, CtaBounds{0, 1});
  EXPECT_EQ(max_workers(p), 3) << "one CTA per role group";
  EXPECT_EQ(planned_workers(p, kLargeFloats), 3);
}

TEST_F(PolicyTest, MinCtasRaisesTheThroughputBudget) {
  const int unbounded = planned_workers(select(kH200), kLargeFloats);
  const snac::Policy p = select(kH200, CtaBounds{24, 0});
  EXPECT_EQ(p.throughput_workers, 24);
  EXPECT_GT(24, unbounded);
  EXPECT_EQ(planned_workers(p, kLargeFloats), 24);
  EXPECT_EQ(planned_workers<L::AllGather>(p, kLargeFloats), 24);
  EXPECT_TRUE(coresident(p, kH200));
}

// H200's fixed roles {2, 4, 2}: an AllGather launches 6, an AllReduce 8. A min of 7 must reach
// the AllGather without taking a CTA from the AllReduce.
TEST_F(PolicyTest, MinCtasReachesSinglePhaseLaunchesOfFixedRoles) {
  ASSERT_EQ(select(kH200).throughput_workers, 0) << "fixed roles";
  ASSERT_EQ(planned_workers<L::AllGather>(select(kH200), kLargeFloats), 6);
  const snac::Policy p = select(kH200, CtaBounds{7, 0});
  EXPECT_GE(planned_workers<L::AllGather>(p, kLargeFloats), 7);
  EXPECT_EQ(planned_workers(p, kLargeFloats), 8);
  const snac::Policy within = select(kH200, CtaBounds{6, 0});
  EXPECT_EQ(within.throughput_workers, 0) << "a min every launch meets keeps the table's roles";
}

TEST_F(PolicyTest, MinCtasLeavesTheLatencyRegime) {
  const snac::Policy p = select(kH200, CtaBounds{24, 0});
  EXPECT_EQ(planned_workers(p, kSmallFloats), planned_workers(select(kH200), kSmallFloats));
}

TEST_F(PolicyTest, MinCtasStopsAtTheCoresidencyBudget) {
  const Facts shared{9, 132, 8, 8};  // 8 ranks on one GPU: 16 SMs each
  const snac::Policy p = select(shared, CtaBounds{64, 0});
  EXPECT_EQ(p.throughput_workers, 16);
  EXPECT_TRUE(coresident(p, shared));
}

TEST_F(PolicyTest, MinCtasAboveMaxCtasTakesTheMax) {
  const snac::Policy p = select(kH200, CtaBounds{40, 12});
  EXPECT_EQ(max_workers(p), 12);
  EXPECT_EQ(planned_workers(p, kLargeFloats), 12);
}

TEST_F(PolicyTest, MinCtasOverridesFixedEnvironmentRoles) {
  set("PURLIN_ROLES", "1,2,1");
  const snac::Policy p = select(kH200, CtaBounds{10, 0});
  EXPECT_EQ(planned_workers<L::AllGather>(p, kLargeFloats), 10);
  EXPECT_EQ(planned_workers(p, kLargeFloats), 10);
}

TEST_F(PolicyTest, CtaBoundsFromTheConfig) {
  const CtaBounds unset = cta_bounds(kUndef, kUndef);
  EXPECT_EQ(unset.min, 0);
  EXPECT_EQ(unset.max, 0);
  const CtaBounds config = cta_bounds(2, 9);
  EXPECT_EQ(config.min, 2);
  EXPECT_EQ(config.max, 9);
  EXPECT_EQ(cta_bounds(kUndef, 100000).max, 1024) << "capped";
  EXPECT_EQ(cta_bounds(100000, kUndef).min, 1024) << "capped, also where no SM count caps it later";
}

// As in NCCL (init.cc: envConfigOverride), a valid environment value replaces the config's.
TEST_F(PolicyTest, CtaBoundsEnvironmentOverridesTheConfig) {
  set("NCCL_MAX_CTAS", "6");
  const CtaBounds env = cta_bounds(2, 9);
  EXPECT_EQ(env.min, 2);
  EXPECT_EQ(env.max, 6);
  set("NCCL_MIN_CTAS", "4");
  EXPECT_EQ(cta_bounds(kUndef, 9).min, 4);
  EXPECT_EQ(cta_bounds(kUndef, kUndef).max, 6) << "and sets what the config leaves unset";
}

TEST_F(PolicyTest, CtaBoundsIgnoreInvalidEnvironmentValues) {
  for (const char* bad : {"0", "-3", "eight", "4x", " "}) {
    set("NCCL_MIN_CTAS", bad);
    set("NCCL_MAX_CTAS", bad);
    const CtaBounds b = cta_bounds(2, 9);
    EXPECT_EQ(b.min, 2) << "NCCL_MIN_CTAS=\"" << bad << "\"";
    EXPECT_EQ(b.max, 9) << "NCCL_MAX_CTAS=\"" << bad << "\"";
  }
  set("NCCL_MIN_CTAS", "99999999999999999999");  // beyond int64: strtoll's ERANGE
  EXPECT_EQ(cta_bounds(2, 9).min, 2);
}

TEST_F(PolicyTest, CtaBoundsCapLargeEnvironmentValues) {
  set("NCCL_MAX_CTAS", "5000000000");  // beyond int
  EXPECT_EQ(cta_bounds(kUndef, kUndef).max, 1024);
}

TEST_F(PolicyTest, CtaBoundsEnvironmentMinAboveTheMaxBecomesTheMax) {
  set("NCCL_MIN_CTAS", "40");
  const CtaBounds b = cta_bounds(kUndef, 12);
  EXPECT_EQ(b.min, 12);
  EXPECT_EQ(b.max, 12);
}

}  // namespace
}  // namespace purlin::policy
