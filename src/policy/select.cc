#include <algorithm>
#include <cstddef>

#include "base/log.h"
#include "policy/policy.h"
#include "policy/table.h"

namespace purlin::policy {
namespace {

// The co-residency budget counts one SNAC CTA per SM. That needs every SM to hold at least
// one, which launch::select_smem guarantees (a CTA gets no more shared memory than the GPU
// allows a block, or the communicator is not created). Where a small workspace lets two CTAs
// share an SM the count is conservative: fewer CTAs than could be resident, never more.

// A composition runs a stager, a consumer and a finisher group, each of at least one CTA:
// no budget goes below this.
constexpr int kComposedMin = 3;

// Workers of a launch that uses all three role groups (a composition).
int workers(const snac::Roles& r) { return r.stagers + r.consumers + r.finishers; }

// The CTAs per rank that stay co-resident (one per SM), never below a composition's.
int coresident_budget(const Facts& facts) {
  return std::max(kComposedMin, facts.sm_count / std::max(1, facts.ranks_on_gpu));
}

// Shrinks the largest group by one CTA until the total fits. Largest first keeps the groups'
// proportions; on ties consumers go last, since they carry the NVLink pulls.
void shrink_to(snac::Roles& r, int budget) {
  if (workers(r) <= budget) return;
  // A team > 1 needs groups in multiples of it; single-CTA steps need team 1.
  r.team = 1;
  while (workers(r) > budget) {
    int* order[] = {&r.stagers, &r.finishers, &r.consumers};
    int* largest = nullptr;
    for (int* g : order) {
      if (*g > 1 && (largest == nullptr || *g > *largest)) largest = g;
    }
    if (largest == nullptr) return;  // {1, 1, 1}: nothing left to give
    --*largest;
  }
}

}  // namespace

snac::Policy table_policy(int sm_major) {
  const Row& row = row_for(sm_major);
  snac::Policy p;
  p.chunk_bytes = row.chunk_bytes;
  p.packet_chunk_bytes = row.packet_chunk_bytes;
  p.latency_max_bytes = row.latency_max_bytes;
  p.one_hop_max_bytes = row.one_hop_max_bytes;
  p.throughput = row.throughput;
  p.latency = row.latency;
  p.min_ring_slots = row.min_ring_slots;
  return p;
}

snac::Policy shared_gpu(snac::Policy p, const Facts& facts) {
  if (facts.ranks_on_gpu <= 1 || facts.sm_count <= 0) return p;
  const Row& row = row_for(facts.sm_major);
  p.chunk_bytes = row.shared_chunk_bytes;
  // The rank's share of the SMs (at most the row's), split per collective by the bytes each
  // role group moves (snac::balanced_roles). Measured on one H200 with 8 ranks, 256 MiB at
  // 256 KiB chunks: AllGather 31% HBM efficiency with the table's 2 + 4 CTAs
  // (perf/snac/results/h200-20261202), 77% with 3 + 12; AllToAll 14% with 2 + 4, 40% with
  // 6 + 9 (PURLIN_ROLES sweeps of 2026-12-02, files not kept; policy/table.h).
  p.throughput_workers = std::min(row.shared_workers, facts.sm_count / facts.ranks_on_gpu);
  if (row.shared_latency_max_bytes != 0) p.latency_max_bytes = row.shared_latency_max_bytes;
  p.rank_roles_min_bytes = row.shared_rank_roles_min_bytes;
  return p;
}

snac::Policy fit_coresident(snac::Policy p, const Facts& facts) {
  // Unknown SM count: nothing to fit against (coresident() reports false).
  if (facts.sm_count <= 0) return p;
  const int budget = facts.sm_count / std::max(1, facts.ranks_on_gpu);
  shrink_to(p.throughput, budget);
  shrink_to(p.latency, budget);
  p.throughput_workers = std::min(p.throughput_workers, coresident_budget(facts));
  return p;
}

snac::Policy bound_ctas(snac::Policy p, const CtaBounds& bounds, const Facts& facts) {
  int max = bounds.max;
  if (max > 0 && max < kComposedMin) {
    PURLIN_INFO(kTuning,
                "maxCTAs %d is below the %d CTAs a composed collective needs (one per role "
                "group); using %d",
                max, kComposedMin, kComposedMin);
    max = kComposedMin;
  }
  if (max > 0) {
    shrink_to(p.throughput, max);
    shrink_to(p.latency, max);
    p.throughput_workers = std::min(p.throughput_workers, max);
  }
  int min = max > 0 ? std::min(bounds.min, max) : bounds.min;
  // Unknown SM count: nothing to fit against (as in fit_coresident; cta_bounds caps min).
  if (const int budget = coresident_budget(facts); facts.sm_count > 0 && min > budget) {
    PURLIN_WARN("minCTAs %d exceeds the %d CTAs per rank that stay co-resident (%d SMs, %d ranks on the GPU); "
                "using %d",
                min, budget, facts.sm_count, facts.ranks_on_gpu, budget);
    min = budget;
  }
  // A budget gives every throughput launch exactly its workers. Fixed roles give a
  // single-phase collective only stagers + consumers, so when those fall short the roles
  // become a budget split by bytes moved (snac::balanced_roles), of at least a composition's
  // workers so that no launch shrinks (those are within the max: shrunk above).
  if (p.throughput_workers > 0) {
    p.throughput_workers = std::max(p.throughput_workers, min);
  } else if (min > p.throughput.stagers + p.throughput.consumers) {
    p.throughput_workers = std::max(min, workers(p.throughput));
  }
  return p;
}

snac::Policy select(const Facts& facts, const CtaBounds& bounds) {
  return bound_ctas(fit_coresident(apply_env(shared_gpu(table_policy(facts.sm_major), facts)), facts), bounds,
                    facts);
}

int max_workers(const snac::Policy& p) {
  return std::max({workers(p.throughput), workers(p.latency), p.throughput_workers});
}

bool coresident(const snac::Policy& p, const Facts& facts) {
  if (facts.sm_count <= 0) return false;
  return static_cast<long long>(max_workers(p)) * std::max(1, facts.ranks_on_gpu) <=
         facts.sm_count;
}

}  // namespace purlin::policy
