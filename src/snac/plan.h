// A launch's plan: every number SNAC derives from (collective, element size, shapes, policy,
// communicator geometry) before any worker starts; planner.h computes it (make_plan). It is
// computed once per rank on the host from inputs that are identical on every rank (the shape's
// maximum partition, the policy, the communicator's sizes), so every rank chooses the same
// regime, chunk stride, ring and epoch advance: the flag a consumer waits for is computed from
// its own plan, never exchanged. Only the split of a rank's workers into role groups may
// differ between ranks (rank_roles).
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/chunking.h"
#include "layout/collective.h"
#include "layout/flags.h"
#include "layout/host_device.h"
#include "snac/datapath.h"
#include "snac/handle.h"
#include "snac/policy.h"

namespace purlin::snac {

enum class Status : std::uint8_t {
  ok,
  aborted,            // a wait timed out or another worker aborted (see the backend's report)
  bad_argument,       // root out of range, or an in-place call the protocol cannot serve
  bad_policy,         // empty role group, group not a multiple of the team
  staging_too_small,  // not even one element per partition fits a staging half
  too_many_workers,   // more workers than the communicator has epoch slots
  mismatch,           // a peer called a different collective, count, type, op or root
};

PURLIN_HD constexpr const char* to_string(Status s) {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::aborted:
      return "aborted";
    case Status::bad_argument:
      return "bad argument";
    case Status::bad_policy:
      return "bad policy";
    case Status::staging_too_small:
      return "staging too small";
    case Status::too_many_workers:
      return "too many workers";
    case Status::mismatch:
      return "call mismatch between ranks";
  }
  return "unknown";
}

// One call on one rank. Shapes count elements; the output shape describes this rank's output
// buffer and the input shape its input buffer (they differ only for AllToAllV, where they are
// the send and receive counts). A composition's intermediate uses the input shape.
template <class C, class E>
struct Args {
  using InShape = typename C::Input::Shape;
  using OutShape = typename C::Output::Shape;

  const void* input = nullptr;
  void* output = nullptr;
  InShape in_shape{};
  OutShape out_shape{};
  int root = 0;
  OpArg<E> op_arg{};
  // Largest partition over all ranks, in elements, when a rank's shapes do not show it
  // (AllToAllV: the maximum of the full count matrix). 0: the shapes show it.
  std::size_t agreed_max_elems = 0;
  // What every rank of the call agrees on (fingerprint.h: Fingerprint::make); 0: unchecked.
  std::uint64_t fingerprint = 0;
};

// Facts of a declaration that SNAC's staging geometry needs, derived from the layout traits.
template <class C>
struct Program {
  using F = typename C::First;
  using G = typename C::Last;
  static constexpr int phases = C::phases;
  static constexpr bool composed = phases == 2;
  static constexpr int groups = C::role_groups;

  // A slot holds chunk c of every input partition of every phase: F's (one if packed, n if
  // scattered), then, in a composition, G's input (the intermediate, packed).
  PURLIN_HD static constexpr int slot_strides(int ranks) {
    return F::Input::regions(ranks) + (composed ? G::Input::regions(ranks) : 0);
  }
  // Which stride of a slot holds chunk c of input partition `partition` of `phase`.
  PURLIN_HD static constexpr int stride_index(int phase, int partition, int ranks) {
    return phase == 0 ? within<typename F::Input>(partition)
                      : F::Input::regions(ranks) + within<typename G::Input>(partition);
  }

 private:
  template <class L>
  PURLIN_HD static constexpr int within(int partition) {
    return L::kind == layout::LayoutKind::packed ? 0 : partition;
  }
};

// In place, a single-phase collective's own region already holds what it would copy there
// (collective.h: in_place_offset); the self copy, its flag and its ack all vanish.
template <class C, class E>
PURLIN_HD bool self_copy_is_noop(const Args<C, E>& a, int rank) {
  constexpr std::size_t es = sizeof(E);
  if constexpr (C::phases == 2 || C::reduces) {
    return false;
  } else {
    using In = typename C::Input;
    using Out = typename C::Output;
    if (!C::is_producer(rank, a.root) || !C::is_consumer(rank, a.root) || !Out::holds(rank, rank) ||
        C::source(rank, rank, a.root).rank != rank || a.input == nullptr) {
      return false;
    }
    // The packed side lies inside the scattered one: the input inside the output for
    // AllGather and Gather, the output inside the input for Scatter.
    const auto* in = static_cast<const std::byte*>(a.input);
    const auto* out = static_cast<const std::byte*>(a.output);
    if constexpr (In::kind == layout::LayoutKind::packed) {
      return in == out + C::in_place_offset(a.out_shape, rank) * es;
    } else {
      return out == in + C::in_place_offset(a.in_shape, rank) * es;
    }
  }
}

// In place, an AllToAll's output region k is its input partition k: a stager reading it and
// the consumer overwriting it would race (a peer's chunk may arrive before this rank staged
// its own). So the consumer of each region stages (or pushes) that chunk itself, then
// consumes into the same bytes, and the stagers idle. Which local worker stages a chunk is
// invisible to peers, so this is a local decision; make_plan checked regions == partitions.
// It adds no wait that could deadlock: the stage waits only for releases and for acks of
// ordinal c - slots, as before. Within ordinal c, rank r blocked on region k waits for rank
// k to reach its region r (which it stages before it polls); if rank k is itself blocked, it
// is on an earlier item, a region j < r, waiting for rank j to reach region k. Every second
// step of such a chain lowers the region index, so it ends at a worker that progresses.
template <class C, class E>
PURLIN_HD constexpr bool stages_own_partitions(const Args<C, E>& a) {
  if constexpr (C::Output::kind == layout::LayoutKind::transposed) {
    return a.input != nullptr && a.input == a.output;
  } else {
    return false;
  }
}

// Which role group a worker belongs to and which part of a chunk it takes.
struct Role {
  int group = 0;   // 0 stagers, 1 consumers of phase 0, 2 consumers of phase 1
  int team = 0;    // team index within the group
  int teams = 1;   // teams in the group
  int member = 0;  // index within the team
  int size = 1;    // team size
};

struct Plan {
  Regime regime = Regime::throughput;
  layout::Chunking chunking{};
  layout::StagingRing ring{};  // throughput only
  // Where each staging half starts: half h at h * half_bytes, fixed by the communicator's
  // staging size, NOT ring.half_bytes(). Consecutive launches may have different rings (other
  // collective, chunk or element size); a ring-derived half 1 of one launch would overlap the
  // half 0 that peers may still be reading from the launch before.
  std::size_t half_bytes = 0;
  std::uint64_t ordinals = 0;  // chunk ordinals of the largest partition: the epoch advance
  // Producers may publish their input in place of a staged copy (engine.h decides per
  // producer and launch; consumers follow SignalLayout::input_address).
  bool zero_copy = false;
  // Latency regime of a composition in one hop (layout compose::one_hop_source): producers
  // push every input partition to the ranks whose output needs it, one role group consumes
  // it into the output, and there is no intermediate and no third group.
  bool one_hop = false;
  Roles roles{};
  int groups = 2;
  // Teams per role group; 0: the group's workers in teams of roles.team. make_plan sets fewer
  // (share_items) where a throughput group has fewer items than teams.
  int teams[3] = {0, 0, 0};

  PURLIN_HD constexpr int group_size(int g) const {
    return g == 0 ? roles.stagers : g == 1 ? roles.consumers : roles.finishers;
  }
  PURLIN_HD constexpr int group_teams(int g) const {
    const int set = g == 0 ? teams[0] : g == 1 ? teams[1] : teams[2];
    return set > 0 ? set : group_size(g) / roles.team;
  }
  PURLIN_HD constexpr int workers() const {
    int w = 0;
    for (int g = 0; g < groups; ++g) w += group_size(g);
    return w;
  }
  PURLIN_HD constexpr Role role(int worker) const {
    int g = 0;
    while (g + 1 < groups && worker >= group_size(g)) worker -= group_size(g++);
    const int size = group_size(g);
    const int t = group_teams(g);
    if (t == size) return {g, worker, t, 0, 1};  // teams of one: no division
    // Workers are dealt over the teams in turn, so team sizes differ by at most one.
    const int team = worker % t;
    return {g, team, t, worker / t, size / t + (team < size % t ? 1 : 0)};
  }
};

struct PlanResult {
  Status status = Status::ok;
  Plan plan{};
};

// A contiguous share of a chunk for one team member, cut on 16-byte boundaries of the chunk:
// element boundaries survive (sizes are at most 16 bytes and divide 16) and, in the latency
// regime, every share starts on a packet.
struct Share {
  std::size_t begin = 0;
  std::size_t size = 0;
};
PURLIN_HD constexpr Share team_share(std::size_t bytes, int parts, int index) {
  if (parts == 1) return {0, bytes};  // a team of one (the latency regime's), no division
  constexpr std::size_t grain = 16;
  const std::size_t units = layout::detail::ceil_div(bytes, grain);
  const std::size_t per = units / static_cast<std::size_t>(parts);
  const std::size_t extra = units % static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t b = i * per + layout::detail::min_of(i, extra);
  const std::size_t e = b + per + (i < extra ? 1 : 0);
  const std::size_t lo = layout::detail::min_of(b * grain, bytes);
  return {lo, layout::detail::min_of(e * grain, bytes) - lo};
}

}  // namespace purlin::snac
