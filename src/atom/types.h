// Element types, reduction ops and their arithmetic, shared by the device Atoms and the host Atom.
//
// This header compiles with nvcc and with a plain host compiler (the host Atom and the SNAC host
// tests are ordinary C++), so device-only intrinsics sit behind NV_IF_ELSE_TARGET.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <nv/target>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace purlin::atom {

template <class... Ts>
struct TypeList {
  static constexpr int size = sizeof...(Ts);
};

template <int I, class List>
struct TypeAt;
template <class T, class... Ts>
struct TypeAt<0, TypeList<T, Ts...>> {
  using type = T;
};
template <int I, class T, class... Ts>
struct TypeAt<I, TypeList<T, Ts...>> : TypeAt<I - 1, TypeList<Ts...>> {};
template <int I, class List>
using TypeAtT = typename TypeAt<I, List>::type;

template <class T, class List>
inline constexpr bool kInList = false;
template <class T, class... Ts>
inline constexpr bool kInList<T, TypeList<Ts...>> = (std::is_same_v<T, Ts> || ...);

// The twelve element types NCCL reduces, in ncclDataType_t order (ncclInt8 = 0 ... ncclFloat8e5m2
// = 11), so the launch bridge can index this list with the runtime enum.
using ElementTypes =
    TypeList<std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t,
             __half, float, double, __nv_bfloat16, __nv_fp8_e4m3, __nv_fp8_e5m2>;

template <class E>
concept Element = kInList<E, ElementTypes>;

// 8- and 16-bit floats accumulate in fp32 (exact widening, one rounding at the end); everything else
// accumulates in its own type, integers wrapping modulo 2^bits as NCCL's do.
template <class E>
struct Accumulator {
  using type = float;
};
template <std::integral E>
struct Accumulator<E> {
  using type = E;
};
template <>
struct Accumulator<double> {
  using type = double;
};
template <class E>
using accumulator_t = typename Accumulator<E>::type;

template <Element E>
__host__ __device__ __forceinline__ accumulator_t<E> widen(E x) {
  if constexpr (std::is_same_v<E, __half>) {
    return __half2float(x);
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return __bfloat162float(x);
  } else if constexpr (std::is_same_v<E, __nv_fp8_e4m3> || std::is_same_v<E, __nv_fp8_e5m2>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}

// Round-to-nearest-even; fp8 saturates to the largest finite value (the cuda_fp8 default, which
// NCCL's fp8 reductions use too).
template <Element E>
__host__ __device__ __forceinline__ E narrow(accumulator_t<E> a) {
  if constexpr (std::is_same_v<E, __half>) {
    return __float2half_rn(a);
  } else if constexpr (std::is_same_v<E, __nv_bfloat16>) {
    return __float2bfloat16_rn(a);
  } else if constexpr (std::is_same_v<E, __nv_fp8_e4m3> || std::is_same_v<E, __nv_fp8_e5m2>) {
    return E(a);
  } else {
    return a;
  }
}

// Arithmetic on accumulators. Floating point uses explicitly rounded intrinsics on the device so
// that nvcc can never contract a multiply and an add into an FMA in one code path but not in
// another: the result must not depend on which path (vector, scalar, host) computed an element.
namespace arith {

template <std::integral A>
using wide_unsigned_t = std::conditional_t<sizeof(A) == 8, std::uint64_t, std::uint32_t>;

// Integers wrap: compute in a wide unsigned type (no signed-overflow UB) and convert back, which
// C++20 defines as reduction modulo 2^bits.
template <std::integral A>
__host__ __device__ __forceinline__ A add(A a, A b) {
  using W = wide_unsigned_t<A>;
  return static_cast<A>(static_cast<W>(a) + static_cast<W>(b));
}
template <std::integral A>
__host__ __device__ __forceinline__ A mul(A a, A b) {
  using W = wide_unsigned_t<A>;
  return static_cast<A>(static_cast<W>(a) * static_cast<W>(b));
}
template <std::integral A>
__host__ __device__ __forceinline__ A max(A a, A b) {
  return a < b ? b : a;
}
template <std::integral A>
__host__ __device__ __forceinline__ A min(A a, A b) {
  return b < a ? b : a;
}

__host__ __device__ __forceinline__ float add(float a, float b) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __fadd_rn(a, b);), (return a + b;))
}
__host__ __device__ __forceinline__ float mul(float a, float b) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __fmul_rn(a, b);), (return a * b;))
}
__host__ __device__ __forceinline__ float reciprocal(float a) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __fdiv_rn(1.0f, a);), (return 1.0f / a;))
}
// fmax/fmin: a NaN operand yields the other operand, as NCCL's max/min do.
__host__ __device__ __forceinline__ float max(float a, float b) { return fmaxf(a, b); }
__host__ __device__ __forceinline__ float min(float a, float b) { return fminf(a, b); }

__host__ __device__ __forceinline__ double add(double a, double b) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __dadd_rn(a, b);), (return a + b;))
}
__host__ __device__ __forceinline__ double mul(double a, double b) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __dmul_rn(a, b);), (return a * b;))
}
__host__ __device__ __forceinline__ double reciprocal(double a) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __ddiv_rn(1.0, a);), (return 1.0 / a;))
}
__host__ __device__ __forceinline__ double max(double a, double b) { return fmax(a, b); }
__host__ __device__ __forceinline__ double min(double a, double b) { return fmin(a, b); }

// NCCL's integer average: the wrapped sum divided by n, truncating toward zero (signed types) or
// as unsigned division (unsigned types).
template <std::integral A>
__host__ __device__ __forceinline__ A divide(A a, int n) {
  if constexpr (std::is_signed_v<A>) {
    return static_cast<A>(static_cast<std::int64_t>(a) / static_cast<std::int64_t>(n));
  } else {
    return static_cast<A>(static_cast<std::uint64_t>(a) / static_cast<std::uint64_t>(n));
  }
}

}  // namespace arith

// Reduction ops. `combine` is the binary operation applied in ascending source order; Avg and
// PreMulSum reuse Sum's and add a post-division / pre-multiplication (see Reducer).
namespace op {
struct Sum {
  template <class A>
  __host__ __device__ __forceinline__ static A combine(A a, A b) {
    return arith::add(a, b);
  }
};
struct Prod {
  template <class A>
  __host__ __device__ __forceinline__ static A combine(A a, A b) {
    return arith::mul(a, b);
  }
};
struct Max {
  template <class A>
  __host__ __device__ __forceinline__ static A combine(A a, A b) {
    return arith::max(a, b);
  }
};
struct Min {
  template <class A>
  __host__ __device__ __forceinline__ static A combine(A a, A b) {
    return arith::min(a, b);
  }
};
// Sum, then divide by n: integers divide the wrapped sum; floats multiply the accumulated sum by
// 1/n (computed in the accumulation type) and round once. NCCL instead pre-multiplies every float
// contribution by 1/n, so float results may differ from NCCL's in the last bit.
struct Avg : Sum {};
// Every contribution is multiplied by a per-call scalar (of the element type) and the products
// are summed, as ncclRedOpCreatePreMulSum defines.
struct PreMulSum : Sum {};
}  // namespace op

// ncclRedOp_t order (ncclSum = 0 ... ncclAvg = 4), then PreMulSum (NCCL's user-created ops).
using ReduceOps = TypeList<op::Sum, op::Prod, op::Max, op::Min, op::Avg, op::PreMulSum>;

template <class Op>
concept ReduceOp = kInList<Op, ReduceOps>;

// The per-call argument of PreMulSum. A host-resident scalar travels by value; a device-resident
// one by pointer, read once by each thread at the start of the call (the NCCL residence modes).
template <Element E>
struct OpArg {
  E scalar{};
  const E* scalar_ptr = nullptr;
};

}  // namespace purlin::atom
