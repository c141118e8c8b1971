// The tuning inputs of one SNAC launch (DESIGN §2 and §4). Plain data: src/policy will fill it
// from measured tables; the defaults below are reasoned starting points, each with its reason.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/host_device.h"

namespace purlin::snac {

// Throughput: each rank stages chunks into its own peer-visible ring, notifies with a flag, and
// consumers pull (remote reads), chunk by chunk, pipelined over the role groups.
// Latency: stage and notify fuse into 16-byte {8 B payload, 8 B flag} packets pushed into the
// consumer's packet buffer; one NVLink crossing instead of two, at twice the bytes on the wire.
enum class Regime : std::uint8_t { throughput, latency };

// CTAs (host: worker threads) per role group. `finishers` is the third group of a composition
// (e.g. AllReduce's gatherers); single-phase collectives launch without it. `team` CTAs share
// one chunk, each taking a 16-byte-grained slice; the last to finish (an acq_rel counter)
// publishes. Every group size must be a multiple of `team`.
struct Roles {
  int stagers = 2;
  int consumers = 4;
  int finishers = 2;
  int team = 1;

  bool operator==(const Roles&) const = default;
};

struct Policy {
  // Throughput chunk: the unit that is staged, flagged, pulled and acknowledged. 256 KiB is two
  // Atom pipeline windows of the paper's H200 point (8 stages x 16 KiB = 128 KiB per CTA), so a
  // consumer CTA primes its pipeline once per chunk and runs half of it in steady state; with
  // 4 consumer CTAs, 1 MiB (H200's bandwidth-delay product) is in flight. Smaller chunks
  // raise flag traffic per byte; larger ones lengthen the pipeline fill before the first pull.
  std::size_t chunk_bytes = 256 * 1024;

  // Latency chunk: the unit one team pushes as packets. 4 KiB is 512 packets, two per thread of
  // a 256-thread CTA: every thread issues its stores back to back and no CTA idles on a
  // 1 KiB message. Rounded up to a multiple of 16 bytes so that team slices start on packets.
  std::size_t packet_chunk_bytes = 4 * 1024;

  // Regime crossover, in bytes of the largest partition one rank sends to one peer. Push saves
  // about 0.7 us per call on H200 (1.4 vs 2.1 us, DESIGN §4) and costs twice the wire bytes at
  // packet granularity, which NVLink moves far below link rate; 64 KiB keeps the extra wire
  // time well under the saving. A launch falls back to throughput when the packet buffers
  // are too small, whatever this says. 0 forces throughput.
  std::size_t latency_max_bytes = 64 * 1024;

  // One-hop crossover of a composition's latency regime (AllReduce, Broadcast, Reduce), in
  // bytes of the whole input one rank pushes to each reader: up to here every rank pushes
  // everything its readers need and they reduce or copy it at once (one NVLink crossing, DESIGN
  // §2); beyond it the two-hop form (reduce-scatter, then all-gather of the reduced partitions)
  // pushes 1/n as much per reader. 0 disables one hop. Also bounded by the packet buffer.
  std::size_t one_hop_max_bytes = 64 * 1024;

  // Throughput keeps consumers ahead of stagers (a pull crosses NVLink, a stage does not);
  // latency roles are a ceiling (a launch takes no more CTAs than it has items), pushers as
  // many as pollers since each pushes its items one after another (measured: policy/table.h).
  Roles throughput{2, 4, 2, 1};
  Roles latency{8, 6, 2, 1};

  // Nonzero: the throughput regime splits this many workers over a collective's role groups in
  // proportion to the bytes each group moves per chunk ordinal (planner.h: balanced_roles),
  // instead of using `throughput`. For ranks sharing one GPU, where stage and pull are both
  // HBM copies and each group's speed is its CTA count: an AllGather stages one partition and
  // pulls n, an AllToAll stages and pulls n, and fixed roles starve one or the other.
  int throughput_workers = 0;

  // Throughput pipeline depth: the chunk shrinks (to a 4 KiB multiple) until the staging ring
  // holds this many slots. A one-slot ring serializes stage, pull and drain acknowledgment of
  // every chunk; a composition's slot holds n + 1 strides, so an AllReduce over 8 ranks with
  // 1 MiB chunks in a 16 MiB half gets one slot. 1: the ring only has to fit (the policy
  // table, policy/table.h, asks for more).
  std::size_t min_ring_slots = 1;

  // Throughput: the smallest chunk a payload is cut into so that every team has an item
  // (planner.h: ordinals_in_flight), on top of the ring depth that gives each one a slot. Each
  // chunk costs its flags, acks and barriers whatever its size, so below this more teams do
  // not pay. At least chunk_bytes: no spreading. 64 KiB: 8 ranks on one H200, AllReduce 2-4
  // MiB 1.7x faster than without spreading, ReduceScatter 1-4 MiB up to 1.7x slower than with
  // none (perf/snac/results/h200-20261204-reduce, steps/3-spread-sweep).
  std::size_t spread_min_bytes = 64 * 1024;

  // Rooted compositions (Reduce, Broadcast) in the throughput regime with a worker budget
  // (throughput_workers): from this many bytes of the whole buffer on, each rank splits its
  // workers by what it really moves (planner.h: rank_roles) and Reduce's root forms no partition
  // of the reduction (layout::whole_buffer_shape), so the root's workers gather and the other
  // ranks' reduce; below it every rank takes the same balanced_roles. 0: never. Every rank
  // decides from the whole buffer's size, so they agree.
  std::size_t rank_roles_min_bytes = 0;

  // Throughput regime, first phase: where the handle says application buffers are visible to
  // every rank, producers skip the staging copy and consumers read their input directly
  // (DESIGN §2, "zero-copy"). Staging costs a read and a write of every input byte: an
  // AllToAll, which stages all of its input, moves twice the bytes its output needs.
  bool zero_copy = true;

  // Throughput: a group with fewer items than workers splits each item over a team of them
  // (planner.h: share_items) rather than leaving the workers without one idle.
  bool share_items = true;

  // Throughput, where ordinals pipeline through a staged hop (planner.h, make_plan): the ring is
  // deepened and the chunk cut (down to spread_min_bytes) until every team of every group has
  // an item of its own (ordinals_in_flight). Off, and always for a single phase read in place,
  // the ring keeps min_ring_slots and the chunk its size, and share_items gives the items'
  // teams the workers instead.
  bool spread_teams = true;

  // Every native call carries its fingerprint and consumers compare their producers'
  // (fingerprint.h: mismatch detection). Off, a call on mismatched ranks hangs until the
  // timeout or corrupts memory, as NCCL's would. On, a call of up to 32 KiB costs 0.4-0.9 us
  // more (4-9%; 8 ranks sharing one H100, perf/snac/results/h100-20261206-items/checkcalls).
  bool check_calls = true;

  PURLIN_HD const Roles& roles(Regime r) const {
    return r == Regime::latency ? latency : throughput;
  }

  // Every rank must plan from the same policy (runtime: the verdict exchange compares them).
  bool operator==(const Policy&) const = default;
};

}  // namespace purlin::snac
