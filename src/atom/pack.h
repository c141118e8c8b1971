// 16-byte packs: the unit every vector path moves, plus the byte-exact helpers that let a pack be
// assembled from sources of any alignment. Host and device share these, so the host Atom exercises
// the same alignment arithmetic as the GPU.
#pragma once

#include <nv/target>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// Unroll hint for the device compiler only (host compilers would warn about the pragma).
#if defined(__CUDA_ARCH__)
#define PURLIN_UNROLL _Pragma("unroll")
#define PURLIN_UNROLL_4 _Pragma("unroll 4")
#else
#define PURLIN_UNROLL
#define PURLIN_UNROLL_4
#endif

namespace purlin::atom {

using Pack = uint4;
inline constexpr std::size_t kPackBytes = sizeof(Pack);
static_assert(kPackBytes == 16);

template <class E>
inline constexpr int kLanes = static_cast<int>(kPackBytes / sizeof(E));

template <class E>
__host__ __device__ __forceinline__ void unpack(const Pack& p, E (&lanes)[kLanes<E>]) {
  std::memcpy(static_cast<void*>(lanes), &p, kPackBytes);  // void*: E may be a class type
}
template <class E>
__host__ __device__ __forceinline__ Pack pack(const E (&lanes)[kLanes<E>]) {
  Pack p;
  std::memcpy(&p, lanes, kPackBytes);
  return p;
}

// Bits [r, r + 32) of the 64-bit value hi:lo, r in [0, 32): one SHF on the GPU.
__host__ __device__ __forceinline__ std::uint32_t funnel_right(std::uint32_t lo, std::uint32_t hi,
                                                               unsigned r) {
  NV_IF_ELSE_TARGET(NV_IS_DEVICE, (return __funnelshift_r(lo, hi, r);),
                    (return r == 0 ? lo : (lo >> r) | (hi << (32 - r));))
}

// Bytes [shift, shift + 16) of the 32 bytes lo|hi (shift in [0, 16)). This realigns a source that
// is misaligned relative to the destination: two aligned 16-byte loads plus four funnel shifts,
// instead of sixteen byte loads. `shift` is uniform across the CTA, so the switch never diverges.
__host__ __device__ __forceinline__ Pack extract(const Pack& lo, const Pack& hi, unsigned shift) {
  std::uint32_t a, b, c, d, e;
  switch (shift >> 2) {
    case 0: a = lo.x; b = lo.y; c = lo.z; d = lo.w; e = hi.x; break;
    case 1: a = lo.y; b = lo.z; c = lo.w; d = hi.x; e = hi.y; break;
    case 2: a = lo.z; b = lo.w; c = hi.x; d = hi.y; e = hi.z; break;
    default: a = lo.w; b = hi.x; c = hi.y; d = hi.z; e = hi.w; break;
  }
  const unsigned r = (shift & 3u) * 8u;
  return Pack{funnel_right(a, b, r), funnel_right(b, c, r), funnel_right(c, d, r),
              funnel_right(d, e, r)};
}

// The 16-byte aligned block at `g` with every byte outside [lo, hi) read as zero. Used only for the
// first and last block of a source whose window sticks out of the caller's range: those bytes are
// never read, so no access strays past a buffer (no fault, no sanitizer report, no data race).
__host__ __device__ inline Pack load_partial(std::uintptr_t g, std::uintptr_t lo, std::uintptr_t hi) {
  std::uint32_t w[4] = {0, 0, 0, 0};
  PURLIN_UNROLL
  for (unsigned i = 0; i < 16; ++i) {
    const std::uintptr_t a = g + i;
    if (a >= lo && a < hi) {
      w[i / 4] |= static_cast<std::uint32_t>(*reinterpret_cast<const unsigned char*>(a))
                  << (8 * (i % 4));
    }
  }
  return Pack{w[0], w[1], w[2], w[3]};
}

// One element at any address: a natural load when aligned, byte assembly otherwise (the scalar
// head/tail and fully misaligned destinations only).
template <class E>
__host__ __device__ __forceinline__ E load_element(std::uintptr_t a) {
  if (a % alignof(E) == 0) {
    return *reinterpret_cast<const E*>(a);
  }
  unsigned char bytes[sizeof(E)];
  PURLIN_UNROLL
  for (unsigned i = 0; i < sizeof(E); ++i) {
    bytes[i] = reinterpret_cast<const unsigned char*>(a)[i];
  }
  E e;
  std::memcpy(static_cast<void*>(&e), bytes, sizeof(E));
  return e;
}
template <class E>
__host__ __device__ __forceinline__ void store_element(std::uintptr_t a, E e) {
  if (a % alignof(E) == 0) {
    *reinterpret_cast<E*>(a) = e;
    return;
  }
  unsigned char bytes[sizeof(E)];
  std::memcpy(bytes, &e, sizeof(E));
  PURLIN_UNROLL
  for (unsigned i = 0; i < sizeof(E); ++i) {
    reinterpret_cast<unsigned char*>(a)[i] = bytes[i];
  }
}

}  // namespace purlin::atom
