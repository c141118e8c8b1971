// The compiled-in tuning table (DESIGN §4): one row per GPU generation, each value with the
// measurement or the arithmetic that justified it. Figures are the paper's (DESIGN §4 table):
// link rate R per direction, NVLink round trip, bandwidth-delay product, Atom::copy pull rate.
// Bytes in flight on the throughput path = consumer CTAs x chunk bytes; the target is at
// least the link's bandwidth-delay product.
#pragma once

#include <array>
#include <cstddef>

#include "snac/policy.h"

namespace purlin::policy {

struct Row {
  int sm_major = 0;  // compute capability major; applies up to the next row's
  std::size_t chunk_bytes = 0;
  std::size_t packet_chunk_bytes = 0;
  std::size_t latency_max_bytes = 0;
  std::size_t one_hop_max_bytes = 0;  // snac::Policy::one_hop_max_bytes
  snac::Roles throughput{};
  snac::Roles latency{};
  // Ranks sharing one GPU (select.cc: shared_gpu): every byte crosses the same HBM and no
  // link's bandwidth-delay product applies, so the chunk is sized for the copies themselves.
  std::size_t shared_chunk_bytes = 0;
  // ... and the most workers per rank (within its share of the SMs), split by bytes moved.
  int shared_workers = 0;
  // Throughput pipeline depth (snac::Policy::min_ring_slots): the chunk shrinks until the
  // staging ring holds this many slots.
  std::size_t min_ring_slots = 0;
  // Ranks sharing one GPU: the latency crossover (0: the row's latency_max_bytes).
  std::size_t shared_latency_max_bytes = 0;
  // Ranks sharing one GPU: snac::Policy::rank_roles_min_bytes (0: never).
  std::size_t shared_rank_roles_min_bytes = 0;
};

inline constexpr std::size_t kKiB = 1024;

// Rows in increasing sm_major. A GPU older than the first row uses the first row; a newer one
// the last row at or below it (sm_120 takes the sm_100 row, then the co-residency clamp in
// select() fits the roles to its SM count).
inline constexpr std::array<Row, 3> kTable{{
    // A100 (sm_80): R 300 GB/s, RTT 2.2 us, BDP 512 KiB; pull 264 GB/s with 8 CTAs.
    //  chunk 128 KiB: one Atom pipeline window (8 stages x 16 KiB), so 4 consumers put exactly
    //    the 512 KiB BDP in flight and the pipeline fill before the first pull is half H200's.
    //  packet chunk 4 KiB: two packets per thread of a 256-thread CTA (as on H200).
    //  crossover 64 KiB: not measured on A100; 64 KiB of extra packet bytes at 300 GB/s cost
    //    ~0.2 us, still under the ~0.7 us push saved on H200 at a similar RTT.
    //  roles: 8 CTAs pulled 264 GB/s, so 2 stagers + 4 consumers + 2 finishers = 8 workers.
    //  shared chunk 1 MiB, 16 workers, ring depth 4: H200's (below), not measured on A100.
    {8, 128 * kKiB, 4 * kKiB, 64 * kKiB, 64 * kKiB, {2, 4, 2, 1}, {2, 2, 2, 1}, 1024 * kKiB, 16, 4},
    // H200 (sm_90): R 450 GB/s, RTT 2.1 us, BDP 1 MiB; pull 372 GB/s with 8 CTAs.
    //  chunk 256 KiB: two pipeline windows, 4 consumers x 256 KiB = the 1 MiB BDP in flight.
    //  crossover 64 KiB: push 1.4 us vs pull 2.1 us median; 64 KiB of extra wire bytes at
    //    450 GB/s (~0.15 us) keep most of the 0.7 us saving. 64 KiB also equals the default
    //    packet buffer (runtime DeviceStateConfig), so the latency regime is reachable.
    //  roles: 8 CTAs reached 372 GB/s; consumers outnumber stagers because a pull crosses
    //    NVLink and a stage does not (latency roles: below).
    //  These are snac::Policy's defaults (policy_test checks they agree).
    //  shared chunk 1 MiB: 8 ranks on one H200, AllGather 256 MiB with 3 stagers + 12
    //    consumers: 77% HBM efficiency at 256 KiB chunks, 90% at 1 MiB (snac_bench sweeps of
    //    2026-12-02 with PURLIN_ROLES / PURLIN_CHUNK_BYTES; their files were lost, see
    //    perf/snac/results/h200-20261203-ringdepth): fewer flag round trips, longer pulls.
    //  shared workers 16: what 8 ranks get (132 SMs / 8), the only count measured; fewer
    //    ranks keep the rest of the SMs free for other work (a second communicator's
    //    kernels must be resident too, or the two can deadlock).
    //  ring depth 4: an 8-rank AllReduce slot is 9 strides, so 1 MiB chunks fill a 16 MiB
    //    staging half once and stage, pull and drain serialize. Four slots shrink that chunk
    //    to 452 KiB instead of growing staging: AllReduce 256 MiB, 8 ranks on one H200,
    //    26% HBM efficiency (perf/snac results h200-20261203-ringdepth; 15% with the fixed
    //    roles and 256 KiB chunks of h200-20261202). One rank per GPU with 256 KiB chunks
    //    already has 7 slots up to 8 ranks.
    //  one hop up to 64 KiB (the packet buffer): 8 ranks on one H200, 1 KiB-1 MiB, six
    //    collectives, geometric mean per call 13.7 us, 14.2 us with 16 KiB
    //    (perf/snac/results/h200-20261204-compare/sweep, s5 and s7).
    //  latency roles 8 + 6 + 2 as a ceiling (a launch takes no more CTAs than it has items):
    //    a stager pushes its items one after another, so pushers, not pollers, set the pace.
    //    8 ranks on one H100, us per call with 4 + 10 + 2 -> 8 + 6 + 2: AllReduce 1 KiB
    //    9.24 -> 7.86, 64 KiB 18.86 -> 17.03; AllToAll 8 KiB 8.39 -> 7.92; ReduceScatter
    //    8 KiB 8.15 -> 7.65; Broadcast 64 KiB 16.81 -> 13.30; AllGather unchanged
    //    (perf/snac/results/h100-20261207-roles, r18/sweep). 4 + 10 + 2 had won over
    //    2 + 2 + 2 and 1 + 2 + 1 on H200 (perf/snac/results/h200-20261204-compare, s1-s3).
    //  shared crossover 4 KiB: ranks sharing one GPU pull through its L2 and HBM, so staging
    //    beats pushing packets early: 13.5 us geometric mean with 4 KiB, 13.7 with 16 KiB,
    //    16.1 with 64 KiB (same sweep, s6, s5, s3). Over NVLink the push saves a crossing, so
    //    one rank per GPU keeps 64 KiB (not measured on NVLink yet).
    //  shared per-rank roles from 16 MiB: 8 ranks on one H200, Reduce with per-rank roles
    //    against balanced ones, us per call: 16 MiB 136 vs 157, 256 MiB 1431 vs 1764, but
    //    4 MiB 81 vs 58 and 8 MiB 133 vs 93 (its deeper agreed ring cuts mid-size chunks);
    //    Broadcast even from 4 MiB (perf/snac/results/h200-20261204-rankroles). On one H100
    //    the same split: 16 MiB 148 vs 163, 256 MiB 1538 vs 1824, 4 MiB 85 vs 62 from a 4 MiB
    //    threshold (perf/snac/results/h100-20261206-compare, rank-roles). One rank per GPU
    //    plans fixed roles, which never split per rank.
    {9, 256 * kKiB, 4 * kKiB, 64 * kKiB, 64 * kKiB, {2, 4, 2, 1}, {8, 6, 2, 1}, 1024 * kKiB, 16, 4,
     4 * kKiB, 16 * 1024 * kKiB},
    // B200 (sm_100): R 900 GB/s, RTT 2.8 us, BDP 2 MiB; pull 761 GB/s with 16 CTAs.
    //  chunk 256 KiB with 8 consumers: 2 MiB (the BDP) in flight; stagers and finishers grow
    //    with them so the 16 CTAs that reached 761 GB/s all work (4 + 8 + 4).
    //  crossover 64 KiB: not measured on B200; the extra wire time only shrinks at 900 GB/s,
    //    and a larger value would exceed the default packet buffer and never apply.
    //  shared chunk 1 MiB, 16 workers, ring depth 4: H200's, not measured on B200.
    {10, 256 * kKiB, 4 * kKiB, 64 * kKiB, 64 * kKiB, {4, 8, 4, 1}, {2, 2, 2, 1}, 1024 * kKiB, 16, 4},
}};

constexpr bool rows_in_order() {
  for (std::size_t i = 1; i < kTable.size(); ++i) {
    if (kTable[i - 1].sm_major >= kTable[i].sm_major) return false;
  }
  return true;
}
static_assert(rows_in_order(), "row_for() takes the last row at or below sm_major");

// The row for a compute capability major version.
constexpr const Row& row_for(int sm_major) {
  const Row* best = &kTable[0];
  for (const Row& r : kTable) {
    if (r.sm_major <= sm_major) best = &r;
  }
  return *best;
}

}  // namespace purlin::policy
