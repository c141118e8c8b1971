// Test data for the native collective tests: the twelve NCCL element types as C++ types, a
// runtime-to-template type dispatch, and the deterministic input of every (rank, index).
//
// Input element j of rank k is table[value_index(k, j)], a 256-entry table per type. The device
// fills buffers from the same table with the same index function (fill.cu), so the host
// reference never needs the inputs themselves: it recomputes them. Table values:
//  - integers: half small values (negative ones too, so signed arithmetic and unsigned wrap both
//    show), half arbitrary bit patterns (sums and products wrap);
//  - floats: nonzero magnitudes in [0.5, 2) with both signs, full mantissas for fp32 / fp64 so
//    sums really round; a product of 8 stays finite even in fp8 e4m3, and max / min never meet
//    +0 against -0 or a NaN.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace purlin::native_test {

inline constexpr int kTableSize = 256;

// A 64-bit mix of (rank, index): consecutive elements and ranks land on unrelated entries.
__host__ __device__ inline std::uint32_t value_index(int rank, std::uint64_t j) {
  std::uint64_t x = j * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank + 1) * 0xD1B54A32D192ED03ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<std::uint32_t>(x >> 56);
}

template <class E>
inline constexpr bool kNarrowFloat =
    std::is_same_v<E, __half> || std::is_same_v<E, __nv_bfloat16> ||
    std::is_same_v<E, __nv_fp8_e4m3> || std::is_same_v<E, __nv_fp8_e5m2>;

// The accumulation type of the documented semantics: 8- and 16-bit floats in fp32 (one rounding
// at the end), everything else in its own type.
template <class E>
using Acc = std::conditional_t<kNarrowFloat<E>, float, E>;

template <class E>
Acc<E> widen(E x) {
  if constexpr (std::is_same_v<E, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<E, __nv_bfloat16>) return __bfloat162float(x);
  else if constexpr (kNarrowFloat<E>) return static_cast<float>(x);
  else return x;
}

// Round to nearest even; fp8 through its constructor, which saturates to the largest finite value.
template <class E>
E narrow(Acc<E> a) {
  if constexpr (std::is_same_v<E, __half>) return __float2half_rn(a);
  else if constexpr (std::is_same_v<E, __nv_bfloat16>) return __float2bfloat16_rn(a);
  else if constexpr (kNarrowFloat<E>) return E(a);
  else return a;
}

// Calls f.template operator()<E>() with the C++ type of t; false for an unknown type.
template <class F>
bool with_type(ncclDataType_t t, F&& f) {
  switch (t) {
    case ncclInt8: f.template operator()<std::int8_t>(); return true;
    case ncclUint8: f.template operator()<std::uint8_t>(); return true;
    case ncclInt32: f.template operator()<std::int32_t>(); return true;
    case ncclUint32: f.template operator()<std::uint32_t>(); return true;
    case ncclInt64: f.template operator()<std::int64_t>(); return true;
    case ncclUint64: f.template operator()<std::uint64_t>(); return true;
    case ncclFloat16: f.template operator()<__half>(); return true;
    case ncclFloat32: f.template operator()<float>(); return true;
    case ncclFloat64: f.template operator()<double>(); return true;
    case ncclBfloat16: f.template operator()<__nv_bfloat16>(); return true;
    case ncclFloat8e4m3: f.template operator()<__nv_fp8_e4m3>(); return true;
    case ncclFloat8e5m2: f.template operator()<__nv_fp8_e5m2>(); return true;
    default: return false;
  }
}

inline constexpr std::array<ncclDataType_t, 12> kAllTypes = {
    ncclInt8,   ncclUint8,   ncclInt32,   ncclUint32,   ncclInt64,      ncclUint64,
    ncclFloat16, ncclFloat32, ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

std::size_t type_bytes(ncclDataType_t t);
const char* type_name(ncclDataType_t t);

// One type's table, as elements and widened, plus its raw bytes (what fill.cu uploads).
template <class E>
struct Table {
  std::array<E, kTableSize> value{};
  std::array<Acc<E>, kTableSize> wide{};
};

// The tables, built once per type (thread-safe static initialization).
template <class E>
const Table<E>& table();

// Raw bytes of type t's table: kTableSize * type_bytes(t) bytes.
const unsigned char* table_bytes(ncclDataType_t t);

// The PreMulSum scalars: one passed by value (ncclScalarHostImmediate), another through device
// memory (ncclScalarDevice), so a kernel reading the wrong one shows. They differ per rank, as
// NCCL allows: each rank scales its own contribution by its own scalar. The value is whatever
// the element type makes of it; the reference uses the same rounded value.
template <class E>
E host_scalar(int rank) {
  if constexpr (std::is_integral_v<E>) return static_cast<E>(-3 - rank);
  else if constexpr (kNarrowFloat<E>) return narrow<E>(-1.5f - 0.25f * static_cast<float>(rank));
  else return static_cast<E>(-1.5 - 0.25 * rank);
}
template <class E>
E device_scalar(int rank) {
  if constexpr (std::is_integral_v<E>) return static_cast<E>(5 + rank);
  else if constexpr (kNarrowFloat<E>) return narrow<E>(0.5f + 0.25f * static_cast<float>(rank));
  else return static_cast<E>(0.5 + 0.25 * rank);
}

}  // namespace purlin::native_test
