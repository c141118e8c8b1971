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
// b > 0 is a precondition. a <= b (a partition within one chunk, the latency regime's case)
// takes no division: a kernel's divide by a run-time value is a dependent chain of some 25
// instructions even on its 32-bit path, and a latency launch's setup was a chain of dozens of
// them (without them collectives of 1-8 KiB run 7-25% faster:
// perf/snac/results/h100-h200-20261206-setup).
PURLIN_HD constexpr std::size_t ceil_div(std::size_t a, std::size_t b) {
  if (a <= b) return a == 0 ? 0 : 1;
  return (a - 1) / b + 1;
}

// a / b and a % b (b > 0) with no division where a < b: a launch's item indices, whose first
// items lie below the width (ceil_div says why a division is worth avoiding in a kernel).
PURLIN_HD constexpr std::uint64_t quotient(std::uint64_t a, std::uint64_t b) { return a < b ? 0 : a / b; }
PURLIN_HD constexpr std::uint64_t remainder(std::uint64_t a, std::uint64_t b) { return a < b ? a : a % b; }

// The smallest multiple of `granule` that is >= a; granule > 0 is a precondition.
PURLIN_HD constexpr std::size_t round_up(std::size_t a, std::size_t granule) {
  return ceil_div(a, granule) * granule;
}

}  // namespace purlin::layout::detail
