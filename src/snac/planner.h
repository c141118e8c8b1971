// Planning a launch (plan.h: what a plan holds): make_plan, and the division of a rank's
// workers into role groups and teams that it uses. Host code computes it once per rank per
// call from inputs every rank agrees on; the host tests check the arithmetic directly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/chunking.h"
#include "layout/collective.h"
#include "layout/flags.h"
#include "layout/host_device.h"
#include "snac/datapath.h"
#include "snac/handle.h"
#include "snac/plan.h"
#include "snac/policy.h"

namespace purlin::snac {

// Copy-equivalent bytes (one chunk read + one written = 2) that consuming one chunk ordinal of
// an output of `regions` regions moves: a copy reads and writes each region's chunk, a
// reduction over n ranks reads n chunks and writes one.
PURLIN_HD constexpr long consume_units(int regions, bool reduces, int ranks) {
  return static_cast<long>(regions) * (reduces ? ranks + 1 : 2);
}

// Zero-copy stagers copy nothing, but each publishes its items one after another, and an item
// of ordinal c waits for the acks of ordinal c - slots: one stager with many input partitions
// becomes the pipeline's bottleneck. So they are counted, not weighted: one per 4 input
// partitions. Measured on one H200, 8 ranks, AllToAll 256 MiB (8 partitions), HBM efficiency
// by stagers + consumers: 1 + 15: 45.7%, 2 + 14: 81.6%, 4 + 12: 84.9%, 8 + 8: 71.3%;
// AllGather (1 partition) 1 + 15: 119.6%, 2 + 14: 124.1%, 4 + 12: 108.1%
// (perf/snac/results/h200-20261203-all, sweeps).
PURLIN_HD constexpr int zero_copy_stagers(int partitions) { return (partitions + 3) / 4; }

// `workers` split over the role groups in proportion to weights w (groups from `first` on;
// groups before it are already sized): every group gets at least one worker; rounding
// leftovers go to, or come from, the heaviest weighted group. Team 1.
PURLIN_HD constexpr Roles split_by_weight(int workers, int groups, const long (&w)[3], int first,
                                          int (&size)[3]) {
  long total = 0;
  for (int g = first; g < groups; ++g) total += w[g];
  int sum = 0;
  int heaviest = first;
  for (int g = first; g < groups; ++g) {
    size[g] = total > 0 ? static_cast<int>(layout::detail::max_of<long>(
                              1, (2 * workers * w[g] + total) / (2 * total)))
                        : 1;
    sum += size[g];
    if (w[g] > w[heaviest]) heaviest = g;
  }
  for (; sum < workers; ++sum) ++size[heaviest];
  while (sum > workers) {  // shrink the largest weighted group, never below 1
    int largest = first;
    for (int g = first + 1; g < groups; ++g) largest = size[g] > size[largest] ? g : largest;
    if (size[largest] == 1) break;
    --size[largest];
    --sum;
  }
  return Roles{size[0], size[1], groups == 3 ? size[2] : 1, 1};
}

// Under zero-copy the stagers are counted (zero_copy_stagers), not weighed: they take their
// share of `workers` first, and the weighed split starts at group 1, which this returns.
PURLIN_HD constexpr int count_zero_copy_stagers(int& workers, int partitions, int groups, int (&size)[3]) {
  size[0] = layout::detail::min_of(zero_copy_stagers(partitions),
                                   layout::detail::max_of(1, workers - (groups - 1)));
  workers -= size[0];
  return 1;
}

// Policy::throughput_workers split over the role groups of C in proportion to the bytes each
// moves per chunk ordinal, with every partition the same size on every rank: stagers copy
// every input partition's chunk (under zero-copy they only publish, and get
// zero_copy_stagers), consumers (and a composition's finishers) consume_units of their output.
template <class C>
PURLIN_HD constexpr Roles balanced_roles(int workers, int ranks, bool zero_copy = false) {
  using P = Program<C>;
  const int partitions = P::F::Input::regions(ranks);
  const long w[3] = {2L * partitions, consume_units(P::F::Output::regions(ranks), P::F::reduces, ranks),
                     P::composed ? consume_units(P::G::Output::regions(ranks), P::G::reduces, ranks)
                                 : 0};
  int size[3] = {0, 0, 0};
  const int first = zero_copy ? count_zero_copy_stagers(workers, partitions, P::groups, size) : 0;
  return split_by_weight(workers, P::groups, w, first, size);
}

// The same rule for one rank of a call whose shapes every rank shares (fixed shapes), weighed
// by the elements that rank really moves: a group with nothing to do on it (Broadcast's
// stagers off the root, Reduce's finishers off the root and its F consumers at the root,
// layout::whole_buffer_shape) keeps one worker and the others take the rest. Roles are rank
// local (team counters and epochs are, engine.h); only the chunking must agree, and make_plan
// sizes it for every rank's roles (agreed_ordinals_in_flight).
template <class C, class E>
PURLIN_HD constexpr Roles rank_roles(int workers, int rank, int ranks, const Args<C, E>& a,
                                     bool zero_copy) {
  using P = Program<C>;
  using F = typename P::F;
  long w[3] = {0, 0, 0};
  int produced = 0;  // nonempty input partitions
  if (F::is_producer(rank, a.root)) {
    for (int k = 0; k < ranks; ++k) {
      if (!F::Input::holds(rank, k)) continue;
      const auto e = static_cast<long>(F::Input::region(a.in_shape, rank, k).size);
      w[0] += 2 * e;
      produced += e != 0 ? 1 : 0;
    }
  }
  const auto consumed = [&](auto phase, const auto& shape) {
    using Ph = decltype(phase);
    long units = 0;
    if (!Ph::is_consumer(rank, a.root)) return units;
    for (int k = 0; k < ranks; ++k) {
      if (!Ph::Output::holds(rank, k)) continue;
      units += consume_units(1, Ph::reduces, ranks) *
               static_cast<long>(Ph::Output::region(shape, rank, k).size);
    }
    return units;
  };
  w[1] = consumed(F{}, a.in_shape);  // a composition's intermediate uses the input shape
  if constexpr (P::composed) w[2] = consumed(typename P::G{}, a.out_shape);
  if (w[0] + w[1] + w[2] == 0) return balanced_roles<C>(workers, ranks, zero_copy);
  int size[3] = {0, 0, 0};
  const int first =
      zero_copy ? count_zero_copy_stagers(workers, layout::detail::max_of(produced, 1), P::groups, size) : 0;
  return split_by_weight(workers, P::groups, w, first, size);
}

// Chunk ordinals a throughput launch needs in flight so that every team of every role group
// has an item: a group's items per ordinal are its layout's regions (a stager's input
// partitions, a consumer's output regions), so a reduction into one packed partition needs as
// many ordinals as it has consumer teams, an AllGather's eight regions feed eight teams from
// one. make_plan deepens the ring and shortens the chunk to this (shared GPU, 8 ranks,
// ReduceScatter's 14 consumers found 4 ordinals: perf/snac/results/h200-20261204-reduce).
template <class C>
PURLIN_HD constexpr std::size_t ordinals_in_flight(const Roles& roles, int ranks) {
  using P = Program<C>;
  if (roles.team < 1) return 1;  // make_plan refuses such roles
  const int items[3] = {P::F::Input::regions(ranks), P::F::Output::regions(ranks),
                        P::composed ? P::G::Output::regions(ranks) : 1};
  const int workers[3] = {roles.stagers, roles.consumers, P::composed ? roles.finishers : 0};
  std::size_t most = 1;
  for (int g = 0; g < 3; ++g) {
    const auto teams = static_cast<std::size_t>(layout::detail::max_of(workers[g] / roles.team, 0));
    const auto per = static_cast<std::size_t>(layout::detail::max_of(items[g], 1));
    most = layout::detail::max_of(most, layout::detail::ceil_div(teams, per));
  }
  return most;
}

// ordinals_in_flight for the roles of every rank: the chunk and ring depth must agree across
// ranks while their roles need not (rank_roles). Fixed shapes are the same on every rank, so
// each rank can weigh all of them; V shapes are not, and take balanced_roles everywhere.
template <class C, class E>
PURLIN_HD constexpr std::size_t agreed_ordinals_in_flight(int workers, int ranks,
                                                          const Args<C, E>& a, bool zero_copy) {
  std::size_t most = 1;
  for (int r = 0; r < ranks; ++r) {
    most = layout::detail::max_of(
        most, ordinals_in_flight<C>(rank_roles<C>(workers, r, ranks, a, zero_copy), ranks));
  }
  return most;
}

// Whether a call splits each rank's workers by what that rank moves (rank_roles) instead of
// evenly (balanced_roles): a rooted composition (Reduce, Broadcast), whose root moves much
// more or much less than the others, from Policy::rank_roles_min_bytes of its whole buffer.
// The size is the same on every rank, so every rank decides alike; the launch bridge cuts
// Reduce's shape around its root by the same verdict (layout::whole_buffer_shape).
template <class C>
PURLIN_HD constexpr bool plans_rank_roles(const Policy& p, std::size_t whole_bytes) {
  if constexpr (Program<C>::composed && C::root_role != layout::Root::none) {
    return p.throughput_workers > 0 && p.rank_roles_min_bytes != 0 &&
           whole_bytes >= p.rank_roles_min_bytes;
  } else {
    return false;
  }
}

// Packets a rank's stagers push per chunk ordinal of a one-hop launch (one per reader of each
// input partition) and that its consumers read, for a composition that copies (one per
// output region).
template <class C>
PURLIN_HD constexpr long one_hop_pushes(int rank, int ranks, int root) {
  long pushes = 0;
  for (int k = 0; k < ranks; ++k) {
    for (int q = 0; q < ranks; ++q) pushes += C::one_hop_notifies(rank, k, q, root) ? 1 : 0;
  }
  return pushes;
}
template <class C>
PURLIN_HD constexpr long one_hop_copies(int rank, int ranks, int root) {
  long reads = 0;
  if (!C::is_consumer(rank, root)) return 0;
  for (int k = 0; k < ranks; ++k) reads += C::Output::holds(rank, k) ? 1 : 0;
  return reads;
}

// The one-hop form of a rooted copy (Broadcast) gives its ranks very different work: the
// root pushes every partition to every rank and copies its own once, the others only copy.
// So each rank splits the two groups' latency ceiling by the packets each moves (`moved`),
// and no group takes more workers than it has items (`items`): what a capped group frees goes
// to the other while that has items. Broadcast 64 KiB 13.13 -> 11.65 us, 8 ranks on one H100
// (perf/snac/results/h100-20261207-roles, r19). A rooted reduction keeps the ceiling: split
// the same way (16 workers on every rank) Reduce 64 KiB took 22.22 us instead of 14.86, its
// pushers waiting 13 us for releases from peers' workers that had no SM yet (r19/trace).
// Latency roles are rank local like throughput ones (fingerprints and releases are per rank).
PURLIN_HD constexpr Roles weigh_latency_roles(Roles r, const long (&moved)[2],
                                              const std::uint64_t (&items)[2]) {
  const long w[3] = {moved[0], moved[1], 0};
  int size[3] = {0, 0, 0};
  split_by_weight(r.stagers + r.consumers, 2, w, 0, size);
  for (int g = 0; g < 2; ++g) {
    if (static_cast<std::uint64_t>(size[g]) <= items[g]) continue;
    const std::uint64_t other = static_cast<std::uint64_t>(size[1 - g]) + size[g] - items[g];
    size[1 - g] = static_cast<int>(layout::detail::min_of(items[1 - g], other));
    size[g] = static_cast<int>(items[g]);
  }
  r.stagers = size[0];
  r.consumers = size[1];
  return r;
}

// A throughput group with fewer items (chunk ordinals x its layout's regions) than teams
// gives each item a team of the workers that would have none, and they split its chunk
// (team_share): a payload of few chunks (the chunk stays at least Policy::spread_min_bytes)
// keeps every worker moving bytes instead of one per chunk. The team's last arrival
// acknowledges and publishes, as for a policy's teams. Items a rank skips (its own region,
// an empty partition) are counted: their team idles, as a worker without an item did.
template <class C>
PURLIN_HD constexpr void share_items(Plan& plan, int ranks) {
  using P = Program<C>;
  const int regions[3] = {P::F::Input::regions(ranks), P::F::Output::regions(ranks),
                          P::composed ? P::G::Output::regions(ranks) : 1};
  for (int g = 0; g < plan.groups; ++g) {
    const auto teams = static_cast<std::uint64_t>(plan.group_size(g) / plan.roles.team);
    const std::uint64_t items =
        layout::detail::max_of<std::uint64_t>(1, plan.ordinals * static_cast<std::uint64_t>(regions[g]));
    plan.teams[g] = items < teams ? static_cast<int>(items) : 0;
  }
}

// The policy a call with reduction Op plans with. Zero-copy hands consumers the input's bytes
// as they are; PreMulSum scales while staging (datapath.h: kScalesAtStage), so its producers
// stage and its stagers keep their share of the workers (balanced_roles).
template <class Op>
PURLIN_HD constexpr Policy policy_for_op(Policy p) {
  if constexpr (kScalesAtStage<Op>) p.zero_copy = false;
  return p;
}

template <class C, class E>
PURLIN_HD constexpr PlanResult make_plan(const Policy& policy, const Handle& h,
                                         const Args<C, E>& args) {
  using P = Program<C>;
  constexpr std::size_t es = sizeof(E);
  PlanResult out{};
  Plan& plan = out.plan;
  plan.groups = P::groups;

  if (C::root_role != layout::Root::none && (args.root < 0 || args.root >= h.ranks)) {
    out.status = Status::bad_argument;
    return out;
  }

  // In place, an AllToAll's output region k is its own input partition k, which must be read
  // (staged or pushed) before it is overwritten; the engine orders the two by having the
  // consumer of region k stage that chunk itself first (stages_own_partitions above). That
  // needs each nonempty region to be its partition exactly: an in-place AllToAllV whose receive
  // partitions differ from its send partitions has no meaning and is refused.
  if constexpr (C::Output::kind == layout::LayoutKind::transposed) {
    if (stages_own_partitions(args)) {
      for (int k = 0; k < h.ranks; ++k) {
        const layout::Region in = C::Input::region(args.in_shape, h.rank, k);
        const layout::Region out_region = C::Output::region(args.out_shape, h.rank, k);
        if (!(in == out_region) && (in.size != 0 || out_region.size != 0)) {
          out.status = Status::bad_argument;
          return out;
        }
      }
    }
  }

  // The largest partition sets the epoch advance (chunking.h: launch_chunks) and the regime.
  // Both shapes are consulted because a rank's input and output shapes may differ.
  const std::size_t max_elems = layout::detail::max_of(
      layout::detail::max_of(args.in_shape.max_size(), args.out_shape.max_size()),
      args.agreed_max_elems);
  const std::size_t max_bytes = max_elems * es;

  const std::size_t packet_bytes = h.packet_capacity != 0 ? h.packet_layout().max_bytes() : 0;
  const bool packets_fit = packet_bytes != 0 && max_bytes <= packet_bytes;
  const bool small = policy.latency_max_bytes != 0 && max_bytes <= policy.latency_max_bytes;
  // One hop pushes a composition's whole input to each reader: it must fit one producer's
  // packet area, and the policy says up to which size one hop beats two.
  if constexpr (P::composed) {
    const std::size_t extent = C::Input::extent(args.in_shape, h.rank) * es;
    plan.one_hop = policy.latency_max_bytes != 0 && packet_bytes != 0 && extent <= packet_bytes &&
                   extent <= policy.one_hop_max_bytes;
  }
  plan.regime = plan.one_hop || (packets_fit && small) ? Regime::latency : Regime::throughput;
  const bool zero_copy = policy.zero_copy && h.inputs_peer_visible;
  plan.roles = policy.roles(plan.regime);
  if (plan.one_hop) {
    // Every worker pushes or consumes: the finishers of the two-hop form consume here.
    plan.groups = 2;
    plan.roles.consumers += plan.roles.finishers;
    plan.roles.finishers = plan.roles.team;
  }
  // Ordinals a throughput launch keeps in flight; the same on every rank.
  std::size_t busy = 0;
  if (plan.regime == Regime::throughput && policy.throughput_workers > 0) {
    if (plans_rank_roles<C>(policy, C::Input::extent(args.in_shape, h.rank) * es)) {
      plan.roles = rank_roles<C>(policy.throughput_workers, h.rank, h.ranks, args, zero_copy);
      busy = agreed_ordinals_in_flight<C>(policy.throughput_workers, h.ranks, args, zero_copy);
    } else {
      plan.roles = balanced_roles<C>(policy.throughput_workers, h.ranks, zero_copy);
    }
  }

  if (plan.regime == Regime::latency) {
    const std::size_t chunk = layout::detail::round_up(
        layout::detail::max_of<std::size_t>(policy.packet_chunk_bytes, 16), 16);
    plan.chunking = layout::Chunking::make(chunk, es);
  } else {
    // Shrink the chunk until one slot (every partition of every phase) fits in a half.
    const auto strides = static_cast<std::size_t>(P::slot_strides(h.ranks));
    const std::size_t half = h.staging_bytes / 2;
    const std::size_t fits = half / strides;
    if (fits < es) {
      out.status = Status::staging_too_small;
      return out;
    }
    std::size_t chunk = layout::detail::min_of(policy.chunk_bytes, fits);
    // 4 KiB keeps shrunk chunks on whole Atom vectors; below it more ordinals are not worth
    // more flags per byte.
    constexpr std::size_t kGrain = 4096;
    // Every team of every group has an item: ordinals_in_flight ordinals, in the ring at once
    // and in the payload, give each team one.
    if (busy == 0) busy = ordinals_in_flight<C>(plan.roles, h.ranks);
    // Cutting chunks so that every team has one pays where ordinals pipeline through a staged
    // hop (a staging copy, a composition's intermediate). A single phase whose consumers read
    // the inputs in place has no pipeline to fill, only each chunk's flags and acks to pay, so
    // its teams share whole chunks instead (share_items): 8 ranks on one H100, ReduceScatter
    // 1-8 MiB 1.4-2.6x faster (perf/snac/results/h100-20261207-teams).
    if (!policy.spread_teams || (!P::composed && zero_copy)) busy = 1;
    const std::size_t depth = layout::detail::max_of(
        layout::detail::max_of<std::size_t>(policy.min_ring_slots, 1), busy);
    const std::size_t deep = half / (strides * depth);
    if (deep < chunk) {
      chunk = deep >= kGrain ? deep - deep % kGrain : layout::detail::min_of(chunk, kGrain);
    }
    const std::size_t spread = layout::detail::max_of(
        layout::detail::round_up(layout::detail::ceil_div(max_bytes, busy), kGrain),
        policy.spread_min_bytes);
    chunk = layout::detail::max_of(es, layout::detail::min_of(chunk, spread));
    plan.chunking = layout::Chunking::make(chunk, es);
    plan.half_bytes = half;
    plan.ring = layout::StagingRing::fit(half, plan.chunking.stride * strides);
    plan.ring.slots = layout::detail::min_of<std::uint64_t>(plan.ring.slots, h.slots);
    plan.zero_copy = zero_copy;
  }
  plan.ordinals = plan.chunking.count(max_bytes);
  if (plan.regime == Regime::throughput && policy.share_items) share_items<C>(plan, h.ranks);
  if (plan.regime == Regime::latency && plan.roles.team == 1) {
    // A latency group has no more workers than items (chunk ordinals x regions): a worker
    // without an item would only launch, release and exit. So the policy's roles are a
    // ceiling that larger messages reach, and a small one launches few CTAs.
    const auto items = [&](int regions) {
      return layout::detail::max_of<std::uint64_t>(1, plan.ordinals * static_cast<std::uint64_t>(regions));
    };
    const auto fit = [&](int& group, int regions) {
      if (static_cast<std::uint64_t>(group) > items(regions)) group = static_cast<int>(items(regions));
    };
    // A copy into the output takes every region of a chunk at once (engine_packets.h:
    // poll_copies), except in an in-place AllToAll, whose consumers stage each region first.
    const bool own_regions = stages_own_partitions(args);
    const auto consumer_regions = [&](bool reduces, bool last, int regions) {
      return !reduces && last && !own_regions ? 1 : regions;
    };
    // A rank that is no producer (Broadcast off the root) or no consumer (Reduce off the root,
    // in one hop) has no item in that group: it keeps one worker, which only releases.
    const int n = h.ranks;
    const bool stages = P::F::is_producer(h.rank, args.root);
    const bool consumes = plan.one_hop ? C::is_consumer(h.rank, args.root)
                                       : P::F::is_consumer(h.rank, args.root);
    const int stage_regions = stages ? P::F::Input::regions(n) : 0;
    const int consume_regions =
        !consumes      ? 0
        : plan.one_hop ? consumer_regions(C::reduces, true, C::Output::regions(n))
                       : consumer_regions(P::F::reduces, !P::composed, P::F::Output::regions(n));
    if constexpr (P::composed && !C::reduces && C::root_role != layout::Root::none) {
      if (plan.one_hop) {
        const long moved[2] = {one_hop_pushes<C>(h.rank, n, args.root),
                               one_hop_copies<C>(h.rank, n, args.root)};
        const std::uint64_t most[2] = {items(stage_regions), items(consume_regions)};
        plan.roles = weigh_latency_roles(plan.roles, moved, most);
      }
    }
    fit(plan.roles.stagers, stage_regions);
    fit(plan.roles.consumers, consume_regions);
    if (plan.groups == 3) {
      fit(plan.roles.finishers, consumer_regions(P::G::reduces, true, P::G::Output::regions(n)));
    }
  }

  const Roles& r = plan.roles;
  if (r.team < 1 || r.stagers < r.team || r.consumers < r.team || r.stagers % r.team != 0 ||
      r.consumers % r.team != 0 ||
      (plan.groups == 3 && (r.finishers < r.team || r.finishers % r.team != 0))) {
    out.status = Status::bad_policy;
    return out;
  }
  if (plan.workers() > h.epoch_slots) out.status = Status::too_many_workers;
  return out;
}

}  // namespace purlin::snac
