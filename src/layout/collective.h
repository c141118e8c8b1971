// A collective = a consume op (copy or reduce) + an input layout + an output layout (+ a root
// role), DESIGN §1. Everything SNAC needs to orchestrate it is derived here at compile time:
// who produces, who consumes, which output region is fed from which input region, whom a
// staged chunk must be announced to. SNAC branches on these constants with `if constexpr`,
// never on a runtime collective id.
//
// Relations are structural (independent of sizes): an empty partition still has a producer and
// a consumer, so a consumer of a V collective never has to ask whether a flag will come.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/host_device.h"
#include "layout/layout.h"

namespace purlin::layout {

enum class ConsumeOp : std::uint8_t { copy, reduce };

// none: every rank produces and consumes. producer: only the root's input is read (Scatter,
// Broadcast). consumer: only the root's output is written (Gather, Reduce).
enum class Root : std::uint8_t { none, producer, consumer };

// Whom a producer notifies when a chunk of input partition k is staged (DESIGN §2).
enum class Notify : std::uint8_t {
  every_peer,       // packed input: every rank consumes it
  partition_owner,  // scattered input: only rank k consumes partition k
  root,             // packed input gathered to the root only
};

// What a consumer does with the chunks it waits for.
enum class Consume : std::uint8_t {
  reduce_all_ranks,  // Atom::reduce of the same partition from every rank, in rank order
  copy_each_peer,    // Atom::copy from each peer into its rank-ordered output region
  copy_from_root,    // Atom::copy of the own partition from the root
};

// Names the input region that feeds one output region. rank == kAllRanks: reduce partition
// `partition` over every rank.
inline constexpr int kAllRanks = -1;
struct Source {
  int rank = 0;
  int partition = 0;
};

// The table of transforms that mean something. Anything else is a declaration error: e.g.
// copy scattered -> packed without a producer root has no single source, because every rank
// holds the partition the output wants.
PURLIN_HD constexpr bool defines_collective(ConsumeOp op, LayoutKind in, LayoutKind out,
                                            Root root) {
  if (op == ConsumeOp::reduce) {
    return in == LayoutKind::scattered && out == LayoutKind::packed && root == Root::none;
  }
  if (in == LayoutKind::packed && out == LayoutKind::scattered) return root != Root::producer;
  if (in == LayoutKind::scattered && out == LayoutKind::transposed) return root == Root::none;
  if (in == LayoutKind::scattered && out == LayoutKind::packed) return root == Root::producer;
  return false;
}

template <ConsumeOp Op, class In, class Out, Root R = Root::none>
struct Collective {
  static_assert(is_layout_v<In> && is_layout_v<Out>, "Collective: In and Out must be layouts");
  static_assert(In::variable == Out::variable,
                "Collective: input and output must both be fixed or both be V layouts");
  static_assert(defines_collective(Op, In::kind, Out::kind, R),
                "Collective: this consume op, layout pair and root role is not a collective");

  using Input = In;
  using Output = Out;
  using First = Collective;  // phases, uniformly with compose
  using Last = Collective;

  static constexpr ConsumeOp op = Op;
  static constexpr Root root_role = R;
  static constexpr int phases = 1;
  static constexpr int role_groups = 2;  // stagers, consumers
  static constexpr bool reduces = Op == ConsumeOp::reduce;

  static constexpr Notify notify = In::kind == LayoutKind::packed
                                       ? (R == Root::consumer ? Notify::root : Notify::every_peer)
                                       : Notify::partition_owner;
  static constexpr Consume consume = Op == ConsumeOp::reduce ? Consume::reduce_all_ranks
                                     : R == Root::producer   ? Consume::copy_from_root
                                                             : Consume::copy_each_peer;

  // Whether `rank` reads its input buffer / writes its output buffer. `root` is ignored
  // without a root role.
  PURLIN_HD static constexpr bool is_producer(int rank, int root) {
    return R != Root::producer || rank == root;
  }
  PURLIN_HD static constexpr bool is_consumer(int rank, int root) {
    return R != Root::consumer || rank == root;
  }

  // The input region feeding output region k of `rank`. Precondition:
  // is_consumer(rank, root) && Output::holds(rank, k).
  PURLIN_HD static constexpr Source source(int rank, int k, int root) {
    if constexpr (Out::kind == LayoutKind::transposed) {
      return {k, rank};  // the block rank k addressed to `rank`
    } else if constexpr (In::kind == LayoutKind::packed) {
      return {k, k};  // only rank k holds partition k
    } else if constexpr (Op == ConsumeOp::reduce) {
      return {kAllRanks, k};  // every rank holds partition k
    } else {
      return {root, k};  // Scatter: every rank holds partition k; only the root's counts
    }
  }

  // Whether `peer` consumes input partition k of `rank`, i.e. must be notified when a chunk of
  // it is staged. The inverse of source(); `peer == rank` counts (a rank consumes its own
  // partition too, through a local flag or directly).
  PURLIN_HD static constexpr bool notifies(int rank, int k, int peer, int root) {
    if (!is_producer(rank, root) || !is_consumer(peer, root) || !In::holds(rank, k)) return false;
    return In::kind == LayoutKind::packed || peer == k;
  }

  // NCCL's in-place convention, derived: when input and output share one allocation, the packed
  // side sits at partition `rank` of the scattered side (AllGather: sendbuff == recvbuff +
  // rank * sendcount; ReduceScatter: recvbuff == sendbuff + rank * recvcount; Gather and Scatter
  // at the root). Returns that element offset, 0 when both sides span the whole buffer. SNAC
  // uses it to skip the self copy of an in-place call.
  template <class Shape>
  PURLIN_HD static constexpr std::size_t in_place_offset(const Shape& shape, int rank) {
    if constexpr (In::kind == LayoutKind::packed) {
      return Out::region(shape, rank, rank).offset;
    } else if constexpr (Out::kind == LayoutKind::packed) {
      return In::region(shape, rank, rank).offset;
    } else {
      return 0;
    }
  }

  // Flags published per chunk ordinal for input partition k of `rank`, its own flag included.
  PURLIN_HD static constexpr int fan_out(int rank, int k, int ranks, int root) {
    int count = 0;
    for (int peer = 0; peer < ranks; ++peer) count += notifies(rank, k, peer, root) ? 1 : 0;
    return count;
  }

  // Flags `rank` waits for per chunk ordinal, over all of its output regions.
  PURLIN_HD static constexpr int fan_in(int rank, int ranks, int root) {
    if (!is_consumer(rank, root)) return 0;
    int count = 0;
    for (int k = 0; k < ranks; ++k) {
      if (!Out::holds(rank, k)) continue;
      count += source(rank, k, root).rank == kAllRanks ? ranks : 1;
    }
    return count;
  }
};

template <class C>
inline constexpr bool is_single_phase_v = false;
template <ConsumeOp Op, class In, class Out, Root R>
inline constexpr bool is_single_phase_v<Collective<Op, In, Out, R>> = true;

// A named collective derives from its Collective so diagnostics print its name; this sees
// through the derivation. A concept rather than a trait so that the conjunction short-circuits
// for types without a First.
template <class C>
concept SinglePhase = requires {
  typename C::First;
  C::phases;
} && is_single_phase_v<typename C::First> && (C::phases == 1);

// F then G inside one kernel, G consuming F's output in place, chunk by chunk.
template <class F, class G>
concept Composable = SinglePhase<F> && SinglePhase<G> &&
                     std::is_same_v<typename F::Output, typename G::Input> &&
                     (F::root_role == Root::none || G::root_role == Root::none);

template <class F, class G>
struct compose {
  static_assert(SinglePhase<F> && SinglePhase<G>,
                "compose<F, G>: F and G must be single-phase collectives");
  static_assert(std::is_same_v<typename F::Output, typename G::Input>,
                "compose<F, G>: F's output layout must equal G's input layout");
  static_assert(F::root_role == Root::none || G::root_role == Root::none,
                "compose<F, G>: at most one phase may have a root role");

  using First = typename F::First;
  using Last = typename G::First;
  using Input = typename F::Input;
  using Intermediate = typename F::Output;
  using Output = typename G::Output;

  static constexpr int phases = 2;
  static constexpr int role_groups = 3;  // stagers, F's consumers, G's consumers
  static constexpr Root root_role = F::root_role != Root::none ? F::root_role : G::root_role;
  static constexpr bool reduces = F::reduces || G::reduces;
  // Gathering to a root (Reduce): the root already reads every other rank's intermediate and
  // writes the whole output, so it may be given no partition of F to form while the others
  // share the whole buffer (whole_buffer_shape). Its F consumers then idle and their workers
  // go to its G consumers (snac planner.h: rank_roles), which takes F's work off the one rank
  // that bounds the call.
  static constexpr bool splits_around_root = G::root_role == Root::consumer;

  // Whether `rank` reads its input buffer / writes its output buffer.
  PURLIN_HD static constexpr bool is_producer(int rank, int root) {
    return F::is_producer(rank, root);
  }
  PURLIN_HD static constexpr bool is_consumer(int rank, int root) {
    return G::is_consumer(rank, root);
  }

  // The table's compositions map scattered to scattered: in place means the same buffer.
  template <class Shape>
  PURLIN_HD static constexpr std::size_t in_place_offset(const Shape&, int) {
    static_assert(Input::kind == Output::kind, "in_place_offset: define it for this composition");
    return 0;
  }

  // The one-hop form (DESIGN §2, "latency means hops"): the input partition output region k
  // of `rank` finally depends on, traced through G's source to the intermediate that feeds it
  // and through F's source to the inputs that intermediate was formed from. A producer then
  // pushes that partition straight to every rank that needs it and the consumer applies the
  // whole composition at once (AllReduce: every rank's partition k, reduced in rank order;
  // Broadcast: the root's partition k; Reduce: every partition k, at the root only), instead
  // of two dependent hops through the intermediate.
  // Precondition: is_consumer(rank, root) && Output::holds(rank, k).
  PURLIN_HD static constexpr Source one_hop_source(int rank, int k, int root) {
    const Source via = G::source(rank, k, root);  // the intermediate of rank via.rank
    return F::source(via.rank, via.partition, root);
  }

  // Whether `peer` consumes input partition k of `rank` in the one-hop form: the inverse of
  // one_hop_source. Output region k reads input partition k in every composition of the table
  // (collectives.h pins it), so only region k of each peer is asked.
  PURLIN_HD static constexpr bool one_hop_notifies(int rank, int k, int peer, int root) {
    if (!is_producer(rank, root) || !is_consumer(peer, root) || !Input::holds(rank, k) ||
        !Output::holds(peer, k)) {
      return false;
    }
    const Source s = one_hop_source(peer, k, root);
    return s.partition == k && (s.rank == kAllRanks || s.rank == rank);
  }

  // Whether `rank`'s part of the intermediate (its own partition, packed) can live in its
  // output buffer at the place G would write it anyway, so that G's self-copy vanishes. Not for
  // Reduce's non-roots: they have no output buffer and keep the intermediate in staging.
  PURLIN_HD static constexpr bool intermediate_in_output(int rank, int root) {
    static_assert(Intermediate::kind == LayoutKind::packed);
    return is_consumer(rank, root) && Output::holds(rank, rank) &&
           G::source(rank, rank, root).rank == rank;
  }
};

// The partitions of a collective that takes one whole-buffer count (AllReduce, Broadcast,
// Reduce): cut evenly over the ranks, or, with `around_root` where the composition gathers to
// its root (splits_around_root), over all but the root. Starts are multiples of `granule`
// elements. Every rank must pass the same `around_root` (snac planner.h: plans_rank_roles).
template <class C>
PURLIN_HD constexpr FixedShape whole_buffer_shape(std::size_t total, int ranks, int root,
                                                  std::size_t granule, bool around_root) {
  if constexpr (C::phases == 2) {
    if constexpr (C::splits_around_root) {
      if (around_root) return FixedShape::split_around(total, ranks, root, granule);
    }
  }
  return FixedShape::split(total, ranks, granule);
}

template <class C>
concept Declaration = requires {
  typename C::Input;
  typename C::Output;
  C::phases;
  C::root_role;
} && (C::phases == 1 || C::phases == 2);

}  // namespace purlin::layout
