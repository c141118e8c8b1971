// The one place SNAC names the Atom layer's types. Backends (host_backend.h, device_backend.cuh)
// own the Atom calls themselves; the engine only needs the element/op vocabulary and the
// per-call op argument, so a change in src/atom's spelling is absorbed here.
#pragma once

#include <type_traits>

#include "layout/host_device.h"

#include "atom/combine.h"
#include "atom/types.h"

namespace purlin::snac {

template <class E>
using OpArg = atom::OpArg<E>;

namespace op = atom::op;

template <class E>
concept Element = atom::Element<E>;

template <class Op>
concept ReduceOp = atom::ReduceOp<Op>;

// PreMulSum is NCCL's "each rank scales its own contribution by its own scalar, then sum". The
// scalar is a per-rank argument, so only the producer can apply it: SNAC scales while staging
// (or pushing) and its consumers sum. One product per element, rounded to the element type as
// NCCL does, then the ordinary deterministic sum.
template <class Op>
inline constexpr bool kScalesAtStage = std::is_same_v<Op, op::PreMulSum>;

template <class Op>
using ConsumeOp = std::conditional_t<kScalesAtStage<Op>, op::Sum, Op>;

template <Element E>
PURLIN_HD inline E premultiply(E x, const atom::Reducer<E, op::PreMulSum>& r) {
  return r.finish(r.first(x));
}

}  // namespace purlin::snac
