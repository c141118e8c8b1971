// From a launch::Call (NCCL's counts and buffers) to the snac::Args and snac::Plan of one
// kernel instance: shapes, op argument, partition tables, validation. Plain host C++ (the
// device kernel only sees the result), so CI checks the conversion without a GPU.
//
// Shapes follow NCCL's counts (tests/snac/specs.h builds them the same way):
//   per-rank count (AllGather, ReduceScatter, AllToAll, Gather, Scatter)  FixedShape::uniform
//   whole-buffer count (AllReduce, Broadcast, Reduce)  layout::whole_buffer_shape, 16-byte granule
//   AllGatherV, ReduceScatterV   both shapes = the one table of the scattered side
//   AllToAllV                    input = send table, output = receive table, agreed maximum
// Copies run on a byte element, so their counts (and V tables) are converted to bytes here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "atom/types.h"
#include "launch/bridge.h"
#include "launch/call.h"
#include "layout/collective.h"
#include "layout/host_device.h"
#include "layout/layout.h"
#include "layout/region.h"
#include "snac/fingerprint.h"
#include "snac/handle.h"
#include "snac/planner.h"
#include "snac/policy.h"

namespace purlin::launch {

// ---- Element sizes -------------------------------------------------------------------------

template <std::size_t... I>
constexpr std::array<std::size_t, sizeof...(I)> element_sizes(std::index_sequence<I...>) {
  return {sizeof(atom::TypeAtT<static_cast<int>(I), atom::ElementTypes>)...};
}
inline constexpr std::array<std::size_t, kElementTypes> kElementBytes =
    element_sizes(std::make_index_sequence<kElementTypes>{});

// Bytes of one element of ncclDataType_t `type`; 0 when `type` names none.
constexpr std::size_t element_bytes(int type) {
  return type >= 0 && type < kElementTypes ? kElementBytes[static_cast<std::size_t>(type)] : 0;
}

// ---- Partition tables (V collectives) -------------------------------------------------------

// The inline storage of a V call's shapes: counts and displacements of the input and the output
// side, in the kernel's elements, kMaxRanks entries each. It travels by value as a kernel
// parameter (snac/kernel.cuh: ShapeStorage); 2 KiB, well inside the 4 KiB parameter block.
struct PartitionTables {
  std::size_t in_counts[kMaxRanks] = {};
  std::size_t in_displs[kMaxRanks] = {};
  std::size_t out_counts[kMaxRanks] = {};
  std::size_t out_displs[kMaxRanks] = {};
  // Null displacements (back to back) stay null in the shape rather than becoming a prefix
  // sum, so that the shape means what the caller said.
  bool in_has_displs = false;
  bool out_has_displs = false;

  template <class C, class E>
  PURLIN_HD void attach(snac::Args<C, E>& a) const {
    a.in_shape.counts = in_counts;
    a.in_shape.displs = in_has_displs ? in_displs : nullptr;
    a.out_shape.counts = out_counts;
    a.out_shape.displs = out_has_displs ? out_displs : nullptr;
  }
};

// Fixed shapes carry no tables (and nothing to attach); one byte of parameter.
struct NoTables {};

template <class C>
using ShapeTables = std::conditional_t<C::Input::variable, PartitionTables, NoTables>;

// ---- Shape rules derived from the declaration -----------------------------------------------

// NCCL describes a collective whose input and output have the same layout (AllReduce,
// Broadcast, Reduce) with one whole-buffer count, which Purlin cuts into partitions; the
// others get a count per rank (or per peer).
template <class C>
inline constexpr bool kWholeBufferCount = std::is_same_v<typename C::Input, typename C::Output>;

// AllToAllV: what a rank sends and what it receives are different tables, and neither shows the
// largest partition of the call; the other V collectives describe one scattered side that every
// rank shares.
template <class C>
inline constexpr bool kSendReceiveTables = C::Output::kind == layout::LayoutKind::transposed;

// Partitions of a whole-buffer count start on 16-byte multiples, so each rank's partition starts
// on a vector boundary when the buffer does (granule in elements of E).
template <class E>
inline constexpr std::size_t kSplitGranule = 16 / sizeof(E);

// ---- Conversion -----------------------------------------------------------------------------

inline Result bad_argument(const char* what) {
  return {snac::Status::bad_argument, cudaSuccess, what, false};
}

namespace detail {

inline bool scale_count(std::size_t count, std::size_t scale, std::size_t& out) {
  if (count > std::numeric_limits<std::size_t>::max() / scale) return false;
  out = count * scale;
  return true;
}

// Copies `ranks` entries of a caller's table into inline storage, scaled to kernel elements.
inline Result copy_table(const VCounts& v, int ranks, std::size_t scale, std::size_t* counts,
                         std::size_t* displs, bool& has_displs, const char* counts_name,
                         const char* displs_name) {
  if (v.counts == nullptr) return bad_argument(counts_name);
  has_displs = v.displs != nullptr;
  for (int k = 0; k < ranks; ++k) {
    if (!scale_count(v.counts[k], scale, counts[k])) return bad_argument(counts_name);
    if (has_displs && !scale_count(v.displs[k], scale, displs[k])) return bad_argument(displs_name);
  }
  return {};
}

}  // namespace detail

// PreMulSum's scalar: by value from the low sizeof(E) bytes of call.scalar_bits (byte i of the
// scalar is bits [8i, 8i + 8), whatever the host's byte order), or by device pointer.
template <class E, class Op>
snac::OpArg<E> op_arg(const Call& call) {
  snac::OpArg<E> a{};
  if constexpr (std::is_same_v<Op, atom::op::PreMulSum>) {
    unsigned char bytes[sizeof(E)];
    for (std::size_t i = 0; i < sizeof(E); ++i) {
      bytes[i] = static_cast<unsigned char>(call.scalar_bits >> (8 * i));
    }
    std::memcpy(static_cast<void*>(&a.scalar), bytes, sizeof(E));
    a.scalar_ptr = static_cast<const E*>(call.scalar_device);
  }
  return a;
}

template <class C, class E>
Result variable_shapes(const Call& call, int ranks, std::size_t scale, PartitionTables& t,
                       snac::Args<C, E>& a) {
  Result r = detail::copy_table(call.in, ranks, scale, t.in_counts, t.in_displs, t.in_has_displs,
                                "in.counts", "in.displs");
  if (!r.ok()) return r;
  if constexpr (kSendReceiveTables<C>) {
    r = detail::copy_table(call.out, ranks, scale, t.out_counts, t.out_displs, t.out_has_displs,
                           "out.counts", "out.displs");
    if (!r.ok()) return r;
    if (!detail::scale_count(call.agreed_max, scale, a.agreed_max_elems)) {
      return bad_argument("agreed_max");
    }
  } else {
    std::memcpy(t.out_counts, t.in_counts, sizeof(t.in_counts));
    std::memcpy(t.out_displs, t.in_displs, sizeof(t.in_displs));
    t.out_has_displs = t.in_has_displs;
  }
  a.in_shape.ranks = ranks;
  a.out_shape.ranks = ranks;
  t.attach(a);
  // Every rank advances its epochs by the chunks of the largest partition; a maximum below
  // this rank's own partitions would make ranks disagree (and hang), so it is refused here.
  if constexpr (kSendReceiveTables<C>) {
    if (a.in_shape.max_size() > a.agreed_max_elems || a.out_shape.max_size() > a.agreed_max_elems) {
      return bad_argument("agreed_max");
    }
  }
  return {};
}

// Fills `args` (and, for V collectives, `tables`, which args' shapes then point into) for the
// rank `h` describes. E is the kernel's element: the call's type for a reduction, CopyElement
// for a copy.
template <class C, class E, class Op>
Result make_args(const Call& call, const snac::Handle& h, const snac::Policy& policy,
                 ShapeTables<C>& tables, snac::Args<C, E>& args) {
  const int n = h.ranks;
  if (n < 1 || n > kMaxRanks) return bad_argument("ranks");
  if (h.rank < 0 || h.rank >= n) return bad_argument("rank");
  const std::size_t type_bytes = element_bytes(call.type);
  if (type_bytes == 0 || type_bytes % sizeof(E) != 0 || (C::reduces && type_bytes != sizeof(E))) {
    return bad_argument("type");
  }
  const std::size_t scale = type_bytes / sizeof(E);  // 1 for reductions, bytes for copies

  args = {};
  args.input = call.input;
  args.output = call.output;
  args.root = call.root;
  args.op_arg = op_arg<E, Op>(call);
  // What every rank passes alike: NCCL's count except for V collectives, whose counts differ
  // per rank by design; the op only where there is one, the root only where it matters.
  static_assert(snac::kFingerprintCollectives == kCollectives);
  if (policy.check_calls) {
    args.fingerprint = snac::Fingerprint::make(
        static_cast<int>(call.collective), call.type, C::reduces ? call.op : 0,
        C::root_role != layout::Root::none ? call.root : 0, C::Input::variable ? 0 : call.count);
  }

  if constexpr (C::Input::variable) {
    if (Result r = variable_shapes<C, E>(call, n, scale, tables, args); !r.ok()) return r;
  } else {
    std::size_t count = 0;
    if (!detail::scale_count(call.count, scale, count)) return bad_argument("count");
    if constexpr (kWholeBufferCount<C>) {
      // Reduce's root forms no partition exactly when its workers will gather (planner.h).
      const bool around_root = snac::plans_rank_roles<C>(policy, count * sizeof(E));
      args.in_shape = args.out_shape =
          layout::whole_buffer_shape<C>(count, n, call.root, kSplitGranule<E>, around_root);
    } else {
      if (count > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(n)) {
        return bad_argument("count");
      }
      args.in_shape = args.out_shape = layout::FixedShape::uniform(count, n);
    }
  }

  // A buffer the rank reads or writes must exist when it holds anything; a non-root's unused
  // buffer may be null, as in NCCL.
  if (C::is_producer(h.rank, args.root) && args.input == nullptr &&
      C::Input::extent(args.in_shape, h.rank) != 0) {
    return bad_argument("input");
  }
  if (C::is_consumer(h.rank, args.root) && args.output == nullptr &&
      C::Output::extent(args.out_shape, h.rank) != 0) {
    return bad_argument("output");
  }
  return {};
}

// What a planning verdict blames.
template <class C>
const char* plan_blames(snac::Status s, int root, int ranks) {
  switch (s) {
    case snac::Status::bad_argument:
      return C::root_role != layout::Root::none && (root < 0 || root >= ranks)
                 ? "root"
                 : "input (this collective cannot run in place)";
    case snac::Status::bad_policy:
      return "policy roles";
    case snac::Status::staging_too_small:
      return "handle staging_bytes";
    case snac::Status::too_many_workers:
      return "handle epoch_slots";
    default:
      return "plan";
  }
}

// One call, converted and planned. Not copyable: args' V shapes point into `tables`.
template <class C, class E>
struct Prepared {
  ShapeTables<C> tables{};
  snac::Args<C, E> args{};
  snac::Plan plan{};

  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
};

template <class C, class E, class Op>
Result prepare(const snac::Handle& h, const snac::Policy& policy, const Call& call,
               Prepared<C, E>& p) {
  const snac::Policy planned_policy = snac::policy_for_op<Op>(policy);
  if (Result r = make_args<C, E, Op>(call, h, planned_policy, p.tables, p.args); !r.ok()) return r;
  const snac::PlanResult planned = snac::make_plan(planned_policy, h, p.args);
  p.plan = planned.plan;
  if (planned.status != snac::Status::ok) {
    return {planned.status, cudaSuccess, plan_blames<C>(planned.status, p.args.root, h.ranks)};
  }
  return {};
}

// ---- One rank ------------------------------------------------------------------------------

// With one rank every layout relation collapses to output region 0 = input region 0 (the only
// partition a one-rank buffer has), so a call moves nothing between ranks: it is a copy of that
// region, or nothing when it already lies in place (DESIGN §2, "one rank needs no protocol").
// PreMulSum is the exception: its one contribution is scaled, which is a kernel's work.
template <class Op>
inline constexpr bool kOneRankIsCopy = !snac::kScalesAtStage<Op>;

struct LocalCopy {
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = 0;  // 0: nothing to do (empty, or in place)
};

// The copy a one-rank call is. Precondition: make_args succeeded for a one-rank handle.
template <class C, class E>
Result local_copy(const snac::Args<C, E>& a, LocalCopy& out) {
  const layout::Region in = C::Input::region(a.in_shape, 0, 0).in_bytes(sizeof(E));
  const layout::Region to = C::Output::region(a.out_shape, 0, 0).in_bytes(sizeof(E));
  // AllToAllV's send and receive tables are separate: with one rank they must agree.
  if (in.size != to.size) return bad_argument("counts (one rank sends and receives different sizes)");
  out = {};
  if (to.size == 0) return {};
  const auto* src = static_cast<const std::byte*>(a.input) + in.offset;
  auto* dst = static_cast<std::byte*>(a.output) + to.offset;
  if (src != dst) out = {src, dst, to.size};
  return {};
}

template <class C, class E, class Op>
int planned_workers(const snac::Handle& h, const snac::Policy& policy, const Call& call) {
  Prepared<C, E> p;
  return prepare<C, E, Op>(h, policy, call, p).ok() ? p.plan.workers() : 0;
}

}  // namespace purlin::launch
