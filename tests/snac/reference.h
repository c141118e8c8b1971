// Independent reference arithmetic for the SNAC host tests: element generation and reductions
// written from NCCL's semantics (contributions combined in ascending rank order; 16-bit floats
// accumulate in fp32 and round once; integers wrap), sharing no code with the engine, the layout
// layer's relations or the Atom's combiners. Only the op tag types are the Atom's, as names.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "common/wrapping.h"
#include "snac/datapath.h"

namespace purlin::snac::test {

template <class E>
inline constexpr bool kHalfFloat = std::is_same_v<E, __nv_bfloat16> || std::is_same_v<E, __half>;

template <class E>
using RefAcc = std::conditional_t<kHalfFloat<E>, float, E>;

template <class E>
RefAcc<E> ref_widen(E x) {
  if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else if constexpr (std::is_same_v<E, __half>) {
    return __half2float(x);
  } else {
    return x;
  }
}

template <class E>
E ref_narrow(RefAcc<E> a) {
  if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return __float2bfloat16_rn(a);
  } else if constexpr (std::is_same_v<E, __half>) {
    return __float2half_rn(a);
  } else {
    return a;
  }
}

// Reduce one element's contributions, given in ascending rank order.
template <class E, class Op>
E ref_reduce(const std::vector<E>& xs) {
  using A = RefAcc<E>;
  A acc = ref_widen(xs.at(0));
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const A x = ref_widen(xs[i]);
    if constexpr (std::is_same_v<Op, op::Sum> || std::is_same_v<Op, op::Avg>) {
      acc = purlin::test::wrapping_add(acc, x);
    } else if constexpr (std::is_same_v<Op, op::Prod>) {
      acc = purlin::test::wrapping_mul(acc, x);
    } else if constexpr (std::is_same_v<Op, op::Max>) {
      acc = acc < x ? x : acc;
    } else {
      static_assert(std::is_same_v<Op, op::Min>, "reference: op not covered");
      acc = x < acc ? x : acc;
    }
  }
  if constexpr (std::is_same_v<Op, op::Avg>) {
    const auto n = static_cast<std::int64_t>(xs.size());
    if constexpr (std::is_integral_v<A>) {
      acc = static_cast<A>(static_cast<std::int64_t>(acc) / n);
    } else {
      acc = acc * (A{1} / static_cast<A>(n));
    }
  }
  return ref_narrow<E>(acc);
}

// Deterministic element values: full-range integers; small floats with few significant bits,
// so that sums are exact enough to be meaningful yet still depend on the accumulation order
// for bf16 (the rounding happens once, at the end).
template <class E>
E random_element(std::mt19937_64& rng) {
  if constexpr (std::is_integral_v<E>) {
    return static_cast<E>(rng());
  } else {
    const float v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 64.0f;
    if constexpr (kHalfFloat<E>) {
      return ref_narrow<E>(v);
    } else {
      return static_cast<E>(v);
    }
  }
}

}  // namespace purlin::snac::test
