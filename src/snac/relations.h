// Which bytes of a launch one rank moves and who reads them: the collective's layouts (C)
// evaluated for one rank, one call and its plan. Pure functions of those; the engine
// (engine.h) runs the protocol over them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/collective.h"
#include "layout/host_device.h"
#include "snac/datapath.h"
#include "snac/handle.h"
#include "snac/plan.h"

namespace purlin::snac {

template <class C, class E, class Op>
class Relations {
  using Prog = Program<C>;
  using F = typename Prog::F;
  using G = typename Prog::G;
  static constexpr std::size_t es = sizeof(E);
  static constexpr int kLast = Prog::phases - 1;

 public:
  PURLIN_HD Relations(const Args<C, E>& args, const Plan& plan, int rank, int ranks)
      : a_(args),
        plan_(plan),
        r_(rank),
        n_(ranks),
        skip_self_(self_copy_is_noop(args, rank)),
        own_partitions_(stages_own_partitions(args)) {}

  // A rank's copy of its own partition to itself moves nothing (in place): skipped.
  PURLIN_HD bool skip_self() const { return skip_self_; }
  // An in-place AllToAll: each consumer stages its own region's chunk before overwriting it.
  PURLIN_HD bool own_partitions() const { return own_partitions_; }

  // Whether `peer` reads input partition k of this rank in `phase`. A composition's second
  // phase has one input partition per rank, its own.
  PURLIN_HD bool reads(int phase, int k, int peer) const {
    if constexpr (Prog::composed) {
      if (plan_.one_hop) return C::one_hop_notifies(r_, k, peer, a_.root);
    }
    if (phase == 0) {
      return F::notifies(r_, k, peer, a_.root) && !(skip_self_ && peer == r_);
    }
    return G::notifies(r_, k, peer, a_.root);
  }

  PURLIN_HD bool has_readers(int phase, int k) const {
    for (int q = 0; q < n_; ++q) {
      if (reads(phase, k, q)) return true;
    }
    return false;
  }

  // Zero-copy: this rank's consumers-to-be read its input where it lies, so its stagers only
  // publish (and, before the launch ends, wait until every chunk was read: the application may
  // reuse the buffer once the kernel is done). Decided per producer; consumers learn it from
  // the input address published with the flags, so ranks need not agree. Not when staging
  // transforms the bytes (PreMulSum scales there), and not for an in-place AllToAll, whose
  // consumers overwrite input partitions peers would still be reading. In-place collectives
  // otherwise are safe: an output byte that overlays an input byte is written only after a
  // flag that required reading that input byte (in a composition, the intermediate chunk its
  // one reader published after reducing it).
  PURLIN_HD bool publishes_input() const {
    if constexpr (kScalesAtStage<Op>) {
      return false;  // policy_for_op plans without zero-copy too; kept for direct callers
    } else {
      return plan_.zero_copy && plan_.regime == Regime::throughput && !own_partitions_ &&
             a_.input != nullptr;
    }
  }

  // The input partition of a stager's item i (chunk ordinal i / width): a packed input has
  // one partition, this rank's.
  PURLIN_HD int staged_partition(std::uint64_t i, int width) const {
    if constexpr (F::Input::kind == layout::LayoutKind::packed) return r_;
    return static_cast<int>(layout::detail::remainder(i, static_cast<std::uint64_t>(width)));
  }

  // Byte region of input partition k on this rank.
  PURLIN_HD layout::Region input_region(int k) const {
    return F::Input::region(a_.in_shape, r_, k).in_bytes(es);
  }

  // Byte region of output region k of phase Ph: the output buffer in the last phase, the
  // intermediate (same shape as the input, compositions being fixed-shape) before it.
  template <int Ph>
  PURLIN_HD layout::Region output_region(int k) const {
    using Q = std::conditional_t<Ph == 0, F, G>;
    if constexpr (Ph == kLast) {
      return Q::Output::region(a_.out_shape, r_, k).in_bytes(es);
    } else {
      return Q::Output::region(a_.in_shape, r_, k).in_bytes(es);
    }
  }

  // First packet of input partition k in a reader's area for this producer: one hop pushes
  // every partition to the same reader, each at its place in the input (partition starts are
  // 16-byte multiples, args.h's split granule, so they fall on packets).
  PURLIN_HD std::size_t packet_base(int k) const {
    return plan_.one_hop ? input_region(k).offset / kPacketPayload : 0;
  }

  // The producers output region k of phase Q reads from, in ascending rank order, as a
  // [first, last] range: every rank for a reduction, the one source rank for a copy.
  template <class Q>
  PURLIN_HD layout::Source source(int k, int& first, int& last) const {
    const layout::Source src = Q::source(r_, k, a_.root);
    first = src.rank == layout::kAllRanks ? 0 : src.rank;
    last = src.rank == layout::kAllRanks ? n_ - 1 : src.rank;
    return src;
  }

 private:
  const Args<C, E>& a_;
  const Plan& plan_;
  int r_;
  int n_;
  bool skip_self_;
  bool own_partitions_;
};

}  // namespace purlin::snac
