// Codesign policy selection (DESIGN §4): which snac::Policy a communicator runs with, from the
// compiled-in table (table.h), the environment's overrides, and the co-residency constraint of
// ranks that share one GPU.
//
// Every worker of a SNAC launch waits on workers of other ranks, so every CTA of every rank on
// a GPU must be resident at once or the launch can deadlock. The budget counts one CTA per SM
// (the workers of all ranks on a GPU must fit its SM count): every SM holds at least one, since
// a kernel gets at most the GPU's shared memory per block (launch/kernel_smem.h), and at the
// compiled sizes no more than one (a copy kernel's ~128.5 KiB, a reduction's ~192.5 KiB, or a
// 99 KiB GPU's whole block, against 164 KiB per SM on A100, 228 KiB on H100/H200/B200 and
// 100 KiB on consumer GPUs). Where two would fit the count is conservative.
//
// Environment (read by select(); a malformed or out-of-range value logs a WARN and the table
// value stays):
//   PURLIN_CHUNK_BYTES         throughput chunk, >= 16
//   PURLIN_PACKET_CHUNK_BYTES  latency chunk, >= 16
//   PURLIN_LATENCY_MAX_BYTES   regime crossover, >= 0; 0 forces the throughput regime
//   PURLIN_ONE_HOP_MAX_BYTES   one-hop crossover of compositions, >= 0; 0: always two hops
//   PURLIN_RING_SLOTS          throughput staging ring depth the chunk shrinks to, >= 1
//   PURLIN_SPREAD_MIN_BYTES    smallest chunk a payload is cut into for more teams, >= 16
//   PURLIN_RANK_ROLES_MIN_BYTES  rooted compositions split workers per rank from this whole-
//                              buffer size, >= 0; 0: never
//   PURLIN_ZERO_COPY           0 or 1: consumers may read producers' inputs directly
//   PURLIN_SHARE_ITEMS         0 or 1: a group with fewer chunks than workers splits them
//   PURLIN_SPREAD_TEAMS        0 or 1: chunks are cut for every team where a hop is staged
//   PURLIN_ROLES               throughput CTAs per role: "stagers,consumers,finishers[,team]"
//   PURLIN_LATENCY_ROLES       the same for the latency regime
// Overridden roles are still clamped for co-residency.
// Read by cta_bounds(), NCCL's names, overriding the communicator config's fields as in NCCL:
//   NCCL_MIN_CTAS, NCCL_MAX_CTAS  bounds on a rank's CTAs per launch, >= 1 (capped at 1024)
#pragma once

#include <optional>
#include <string_view>

#include "snac/policy.h"

namespace purlin::policy {

// What the choice depends on. Every rank of a communicator must select from the same facts
// (runtime agrees on them: smallest SM count, largest ranks_on_gpu), because every rank must
// derive the same plan.
struct Facts {
  int sm_major = 9;       // compute capability major version
  int sm_count = 132;     // multiprocessors of the GPU
  int ranks = 1;          // communicator size
  int ranks_on_gpu = 1;   // ranks (this one included) that drive the same GPU
};

// Bounds on the CTAs one launch of a rank may use: NCCL's minCTAs / maxCTAs. 0: unbounded.
struct CtaBounds {
  int min = 0;
  int max = 0;
};

// The communicator's bounds: NCCL_MIN_CTAS / NCCL_MAX_CTAS where set, since in NCCL the
// environment overrides the config, else the config's minCTAs / maxCTAs (a value < 1, such
// as NCCL_CONFIG_UNDEF_INT, is unset). An environment value that is malformed or < 1 is
// reported and ignored, one above 1024 reported and capped; a min above the max becomes
// the max, reported. So min <= max whenever both are set.
CtaBounds cta_bounds(int config_min, int config_max);

// `p` within `bounds`. maxCTAs shrinks each regime's roles (as fit_coresident does) and caps
// the throughput budget; minCTAs raises the throughput budget, which the launch splits over
// its role groups. The latency regime keeps its roles under minCTAs: a message that small
// gains nothing from more CTAs. Fixed throughput roles that a single-phase launch would
// leave below the min become a budget (split by bytes moved, as shared_gpu's). Never fails:
// a max below the 3 CTAs of a composed collective (one per role group) becomes 3 with one
// INFO line, a min past the co-residency budget (sm_count / ranks_on_gpu) becomes that
// budget with one WARN, a min above the max the max.
snac::Policy bound_ctas(snac::Policy p, const CtaBounds& bounds, const Facts& facts);

// The table's policy for an architecture, before overrides and clamping.
snac::Policy table_policy(int sm_major);

// `p` with the environment's overrides applied.
snac::Policy apply_env(snac::Policy p);

// `p` with each regime's roles scaled down (every group >= 1, team 1 when scaled), and the
// throughput worker budget capped (at least 3, one per group), until workers x ranks_on_gpu
// fits sm_count. When even one CTA per group does not fit, the roles
// end at {1, 1, 1, 1} and coresident() reports false.
snac::Policy fit_coresident(snac::Policy p, const Facts& facts);

// `p` for ranks sharing one GPU (ranks_on_gpu > 1): the table's shared chunk, and a
// throughput worker budget of the rank's share of the SMs that each launch splits over its
// role groups by bytes moved (snac::Policy::throughput_workers). Unchanged otherwise.
snac::Policy shared_gpu(snac::Policy p, const Facts& facts);

// bound_ctas(fit_coresident(apply_env(shared_gpu(table_policy(sm_major))))). PURLIN_ROLES,
// when set, replaces the budget with fixed roles.
snac::Policy select(const Facts& facts, const CtaBounds& bounds = {});

// The most workers (CTAs) one launch of `p` may use: all three role groups of a composition,
// in the larger regime. A communicator needs at least this many epoch slots.
int max_workers(const snac::Policy& p);

// True when every rank on the GPU can have max_workers(p) CTAs resident at once.
bool coresident(const snac::Policy& p, const Facts& facts);

// "stagers,consumers,finishers[,team]" (team defaults to 1). Empty when malformed, when a
// group is < 1, when a group is not a multiple of team, or when the total exceeds 1024.
std::optional<snac::Roles> parse_roles(std::string_view text);

}  // namespace purlin::policy
