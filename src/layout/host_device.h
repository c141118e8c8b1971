// Execution-space spelling and the few integer helpers the layout arithmetic needs.
//
// Layout arithmetic runs in three places: the host runtime (sizing launches and staging), the
// host Atom that lets CI run SNAC on CPU threads, and kernels. nvcc needs `__host__ __device__`
// on every function a kernel calls; a host compiler must not see the keywords. The helpers below
// exist because std::min and friends are host-only for nvcc unless every consumer builds with
// --expt-relaxed-constexpr, which Purlin does not require.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef PURLIN_HD
#if defined(__CUDACC__)
#define PURLIN_HD __host__ __device__
#else
#define PURLIN_HD
#endif
#endif

namespace purlin::layout::detail {

template <class T>
PURLIN_HD constexpr T min_of(T a, T b) {
  return b < a ? b : a;
}

template <class T>
PURLIN_HD constexpr T max_of(T a, T b) {
  return a < b ? b : a;
}

// ceil(a / b) without forming a + b - 1, which wraps for sizes near the top of the range.
// b > 0 is a precondition.
PURLIN_HD constexpr std::size_t ceil_div(std::size_t a, std::size_t b) {
  return a == 0 ? 0 : (a - 1) / b + 1;
}

// The smallest multiple of `granule` that is >= a; granule > 0 is a precondition.
PURLIN_HD constexpr std::size_t round_up(std::size_t a, std::size_t granule) {
  return ceil_div(a, granule) * granule;
}

}  // namespace purlin::layout::detail
