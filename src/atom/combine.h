// How one output element (or one 16-byte pack of them) is formed from its sources.
//
// Determinism rests on this file: every path (scalar head/tail, register vector body, cp.async or
// bulk pipeline, host) forms an element with the same three Reducer calls in the same order,
// first(source 0), next(.., source 1), ..., next(.., source n-1), finish. The result therefore does
// not depend on the path, the CTA count or the pipeline configuration.
#pragma once

#include "atom/pack.h"
#include "atom/types.h"

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

template <Element E, ReduceOp Op>
class Reducer {
 public:
  using Acc = accumulator_t<E>;

  __host__ __device__ __forceinline__ Reducer(int n, OpArg<E> arg) : n_(n) {
    if constexpr (std::is_same_v<Op, op::PreMulSum>) {
      scale_ = widen(arg.scalar_ptr != nullptr ? *arg.scalar_ptr : arg.scalar);
    }
    if constexpr (std::is_same_v<Op, op::Avg> && !std::is_integral_v<Acc>) {
      inv_n_ = arith::reciprocal(static_cast<Acc>(n));
    }
  }

  __host__ __device__ __forceinline__ Acc first(E x) const {
    Acc a = widen(x);
    if constexpr (std::is_same_v<Op, op::PreMulSum>) {
      a = arith::mul(a, scale_);
    }
    return a;
  }
  __host__ __device__ __forceinline__ Acc next(Acc a, E x) const { return Op::combine(a, first(x)); }
  __host__ __device__ __forceinline__ E finish(Acc a) const {
    if constexpr (std::is_same_v<Op, op::Avg>) {
      if constexpr (std::is_integral_v<Acc>) {
        a = arith::divide(a, n_);
      } else {
        a = arith::mul(a, inv_n_);
      }
    }
    return narrow<E>(a);
  }

 private:
  Acc scale_{};
  Acc inv_n_{};
  int n_;
};

// Where the sources of one call live. Copy has exactly one source known at compile time, so its
// loops over sources vanish.
struct OneSource {
  std::uintptr_t p;
  __host__ __device__ __forceinline__ static constexpr int count() { return 1; }
  __host__ __device__ __forceinline__ std::uintptr_t addr(int) const { return p; }
};
struct SourceArray {
  const void* const* p;
  int n;
  __host__ __device__ __forceinline__ int count() const { return n; }
  __host__ __device__ __forceinline__ std::uintptr_t addr(int s) const {
    return reinterpret_cast<std::uintptr_t>(p[s]);
  }
};

// Combiner concept used by every path:
//   elem_size                      bytes of one element (the scalar path's step)
//   element(dst, sources, offset)  one element at byte offset `offset` of the call
//   State first(Pack) / next(State&, Pack) / Pack finish(State)   one 16-byte pack
struct CopyCombiner {
  static constexpr std::size_t elem_size = 1;
  using State = Pack;
  __host__ __device__ __forceinline__ Pack first(const Pack& x) const { return x; }
  __host__ __device__ __forceinline__ void next(Pack&, const Pack&) const {}
  __host__ __device__ __forceinline__ Pack finish(const Pack& s) const { return s; }
  template <class Src>
  __host__ __device__ __forceinline__ void element(std::uintptr_t dst, const Src& src,
                                                   std::size_t off) const {
    *reinterpret_cast<unsigned char*>(dst + off) =
        *reinterpret_cast<const unsigned char*>(src.addr(0) + off);
  }
};

template <Element E, ReduceOp Op>
struct ReduceCombiner {
  using R = Reducer<E, Op>;
  using Acc = typename R::Acc;
  static constexpr std::size_t elem_size = sizeof(E);
  static constexpr int lanes = kLanes<E>;
  struct State {
    Acc a[lanes];
  };

  R r;

  __host__ __device__ __forceinline__ State first(const Pack& x) const {
    E e[lanes];
    unpack(x, e);
    State s;
    PURLIN_UNROLL
    for (int i = 0; i < lanes; ++i) s.a[i] = r.first(e[i]);
    return s;
  }
  __host__ __device__ __forceinline__ void next(State& s, const Pack& x) const {
    E e[lanes];
    unpack(x, e);
    PURLIN_UNROLL
    for (int i = 0; i < lanes; ++i) s.a[i] = r.next(s.a[i], e[i]);
  }
  __host__ __device__ __forceinline__ Pack finish(const State& s) const {
    E e[lanes];
    PURLIN_UNROLL
    for (int i = 0; i < lanes; ++i) e[i] = r.finish(s.a[i]);
    return pack(e);
  }
  template <class Src>
  __host__ __device__ __forceinline__ void element(std::uintptr_t dst, const Src& src,
                                                   std::size_t off) const {
    Acc a = r.first(load_element<E>(src.addr(0) + off));
    for (int s = 1; s < src.count(); ++s) a = r.next(a, load_element<E>(src.addr(s) + off));
    store_element<E>(dst + off, r.finish(a));
  }
};

}  // namespace purlin::atom
