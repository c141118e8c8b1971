// An independent host reference for Atom::reduce, and the test data and layouts the host and GPU
// tests share. Written from the documented semantics (purlin/atom.cuh), not from the Atom's code:
// integers in 64-bit with explicit truncation, floats with plain C++ arithmetic.
#pragma once

#include "atom/types.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace purlin::atom::test {

template <class E>
inline constexpr bool kIsNarrowFloat =
    std::is_same_v<E, __half> || std::is_same_v<E, __nv_bfloat16> ||
    std::is_same_v<E, __nv_fp8_e4m3> || std::is_same_v<E, __nv_fp8_e5m2>;

template <class E>
std::string type_name() {
  if constexpr (std::is_same_v<E, std::int8_t>) return "int8";
  else if constexpr (std::is_same_v<E, std::uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<E, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<E, std::uint32_t>) return "uint32";
  else if constexpr (std::is_same_v<E, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<E, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<E, __half>) return "fp16";
  else if constexpr (std::is_same_v<E, float>) return "fp32";
  else if constexpr (std::is_same_v<E, double>) return "fp64";
  else if constexpr (std::is_same_v<E, __nv_bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<E, __nv_fp8_e4m3>) return "fp8e4m3";
  else return "fp8e5m2";
}

template <class Op>
std::string op_name() {
  if constexpr (std::is_same_v<Op, op::Sum>) return "sum";
  else if constexpr (std::is_same_v<Op, op::Prod>) return "prod";
  else if constexpr (std::is_same_v<Op, op::Max>) return "max";
  else if constexpr (std::is_same_v<Op, op::Min>) return "min";
  else if constexpr (std::is_same_v<Op, op::Avg>) return "avg";
  else return "premulsum";
}

template <class E>
float to_float(E x) {
  if constexpr (std::is_same_v<E, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<E, __nv_bfloat16>) return __bfloat162float(x);
  else return static_cast<float>(x);
}
template <class E>
E from_float(float f) {
  if constexpr (std::is_same_v<E, __half>) return __float2half_rn(f);
  else if constexpr (std::is_same_v<E, __nv_bfloat16>) return __float2bfloat16_rn(f);
  else return E(f);
}

// The scalar PreMulSum tests use: exact in every type (integers wrap for unsigned).
template <class E>
E test_scalar() {
  if constexpr (std::is_integral_v<E>) return static_cast<E>(-3);
  else if constexpr (kIsNarrowFloat<E>) return from_float<E>(-1.5f);
  else return static_cast<E>(-1.5);
}

// Random elements. Integers: any bit pattern (wrap-around is part of the contract). Floats: nonzero
// values of moderate magnitude, so that products of 8 stay finite and max/min never meet +0 vs -0.
template <class E>
std::vector<E> random_elements(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<E> v(count);
  for (auto& e : v) {
    const std::uint64_t bits = rng();
    if constexpr (std::is_integral_v<E>) {
      std::memcpy(static_cast<void*>(&e), &bits, sizeof(E));
    } else {
      // magnitude in [0.5, 2) with sign: 1 + k/16 scaled by 2^{-1, 0}
      const float m = (1.0f + static_cast<float>(bits % 16) / 16.0f) *
                      ((bits >> 4) % 2 ? 0.5f : 1.0f) * ((bits >> 5) % 2 ? -1.0f : 1.0f);
      if constexpr (kIsNarrowFloat<E>) {
        e = from_float<E>(m);
      } else {
        // Full-precision mantissas for fp32/fp64, so sums really round.
        const double frac = static_cast<double>(bits >> 12) / static_cast<double>(1ull << 52);
        e = static_cast<E>(static_cast<double>(m) * (1.0 + frac / 8.0));
      }
    }
  }
  return v;
}

// Reference for one element: x[0..n) are its contributions in source order.
template <class E, class Op>
E reference(const E* x, int n, E scalar) {
  if constexpr (std::is_integral_v<E>) {
    using W = std::conditional_t<std::is_signed_v<E>, std::int64_t, std::uint64_t>;
    const auto wrap = [](std::uint64_t v) {
      E e;
      std::memcpy(static_cast<void*>(&e), &v, sizeof(E));  // little-endian truncation to the element width
      return e;
    };
    const auto u = [](E v) { return static_cast<std::uint64_t>(static_cast<W>(v)); };
    E acc = x[0];
    if constexpr (std::is_same_v<Op, op::PreMulSum>) acc = wrap(u(x[0]) * u(scalar));
    for (int i = 1; i < n; ++i) {
      if constexpr (std::is_same_v<Op, op::Sum> || std::is_same_v<Op, op::Avg>) {
        acc = wrap(u(acc) + u(x[i]));
      } else if constexpr (std::is_same_v<Op, op::PreMulSum>) {
        acc = wrap(u(acc) + u(wrap(u(x[i]) * u(scalar))));
      } else if constexpr (std::is_same_v<Op, op::Prod>) {
        acc = wrap(u(acc) * u(x[i]));
      } else if constexpr (std::is_same_v<Op, op::Max>) {
        acc = x[i] > acc ? x[i] : acc;
      } else {
        acc = x[i] < acc ? x[i] : acc;
      }
    }
    if constexpr (std::is_same_v<Op, op::Avg>) acc = static_cast<E>(static_cast<W>(acc) / static_cast<W>(n));
    return acc;
  } else {
    using A = std::conditional_t<std::is_same_v<E, double>, double, float>;
    const auto get = [](E v) -> A {
      if constexpr (kIsNarrowFloat<E>) return to_float(v);
      else return v;
    };
    const A s = get(scalar);
    A acc = std::is_same_v<Op, op::PreMulSum> ? get(x[0]) * s : get(x[0]);
    for (int i = 1; i < n; ++i) {
      const A v = get(x[i]);
      if constexpr (std::is_same_v<Op, op::Sum> || std::is_same_v<Op, op::Avg>) acc = acc + v;
      else if constexpr (std::is_same_v<Op, op::PreMulSum>) {
        const A product = v * s;  // rounded on its own: products are never fused into the sum
        acc = acc + product;
      }
      else if constexpr (std::is_same_v<Op, op::Prod>) acc = acc * v;
      else if constexpr (std::is_same_v<Op, op::Max>) acc = std::fmax(acc, v);
      else acc = std::fmin(acc, v);
    }
    if constexpr (std::is_same_v<Op, op::Avg>) acc = acc * (A(1) / static_cast<A>(n));
    if constexpr (kIsNarrowFloat<E>) return from_float<E>(acc);
    else return acc;
  }
}

// Byte offsets (from 256-byte aligned bases) of dst and of source s, per layout pattern:
//   0 aligned; 1 element-aligned but not 16-byte aligned, different per source; 2 dst element-
//   aligned, sources at arbitrary bytes; 3 dst not even element-aligned.
inline constexpr int kPatterns = 4;
inline std::size_t dst_offset(int pattern, std::size_t es) {
  switch (pattern) {
    case 0: return 0;
    case 1: return (16 - es) % 16 == 0 ? es : 16 - es;
    case 2: return es * 1;
    default: return 3;
  }
}
inline std::size_t src_offset(int pattern, int s, std::size_t es) {
  switch (pattern) {
    case 0: return 0;
    case 1: return (es * static_cast<std::size_t>(s + 2)) % 16;
    case 2: return static_cast<std::size_t>(1 + 5 * s) % 16;
    default: return static_cast<std::size_t>(7 + 3 * s) % 16;
  }
}

}  // namespace purlin::atom::test
