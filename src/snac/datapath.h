// The one place SNAC names the Atom layer's types. Backends (host_backend.h, device_backend.cuh)
// own the Atom calls themselves; the engine only needs the element/op vocabulary and the
// per-call op argument, so a change in src/atom's spelling is absorbed here.
#pragma once

#include "atom/types.h"

namespace purlin::snac {

template <class E>
using OpArg = atom::OpArg<E>;

namespace op = atom::op;

template <class E>
concept Element = atom::Element<E>;

template <class Op>
concept ReduceOp = atom::ReduceOp<Op>;

}  // namespace purlin::snac
