// Grouped send/recv patterns shared by the point-to-point tests (host backend and GPU): which
// rank sends how much to which, and the order in which one rank issues its halves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

namespace purlin::test_patterns {

// One transfer: `size` (the caller's unit: bytes or elements) from `from` to `to`.
struct Transfer {
  int from = 0;
  int to = 0;
  std::size_t size = 0;
};

enum class Pattern { all_to_all_v, ring, exchange, one_sided };
inline constexpr int kPatterns = 4;

inline const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::all_to_all_v: return "all_to_all_v";
    case Pattern::ring: return "ring";
    case Pattern::exchange: return "exchange";
    case Pattern::one_sided: return "one_sided";
  }
  return "?";
}

// The transfers of one group on n ranks; `size(rng)` draws each one's size. AllToAllV-shaped
// (every ordered pair, self included), a ring, neighbours exchanging, or one-sided: a few pairs,
// some several times, so that most ranks call nothing or only send or only receive.
template <class Size>
std::vector<Transfer> make_pattern(Pattern p, int n, std::mt19937_64& rng, Size size) {
  std::vector<Transfer> t;
  switch (p) {
    case Pattern::all_to_all_v:
      for (int s = 0; s < n; ++s)
        for (int d = 0; d < n; ++d) t.push_back({s, d, size(rng)});
      break;
    case Pattern::ring:
      for (int s = 0; s < n; ++s) t.push_back({s, (s + 1) % n, size(rng)});
      break;
    case Pattern::exchange:
      for (int s = 0; s + 1 < n; s += 2) {
        t.push_back({s, s + 1, size(rng)});
        t.push_back({s + 1, s, size(rng)});
      }
      break;
    case Pattern::one_sided:
      for (int k = 0; k < n; ++k) {
        const int s = static_cast<int>(rng() % static_cast<unsigned>(n));
        const int d = static_cast<int>(rng() % static_cast<unsigned>(n));
        const int times = 1 + static_cast<int>(rng() % 3);
        for (int i = 0; i < times; ++i) t.push_back({s, d, size(rng)});
      }
      break;
  }
  return t;
}

// Rank r's halves of `t` (transfer index, whether it is the receive) in a random order that
// keeps, per peer and direction, the order of `t`, as an application may issue them.
inline std::vector<std::pair<std::size_t, bool>> issue_order(const std::vector<Transfer>& t, int r,
                                                             std::mt19937_64& rng) {
  std::vector<std::size_t> mine;  // 2 i: the send of transfer i, 2 i + 1: its receive
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].from == r) mine.push_back(2 * i);
    if (t[i].to == r) mine.push_back(2 * i + 1);
  }
  std::shuffle(mine.begin(), mine.end(), rng);
  auto pair_of = [&](std::size_t k) {
    const Transfer& x = t[k / 2];
    return std::pair<int, std::size_t>{k % 2 == 0 ? x.to : x.from, k % 2};
  };
  // Each position takes the earliest of its (peer, direction) class among those after it.
  for (std::size_t a = 0; a < mine.size(); ++a)
    for (std::size_t b = a + 1; b < mine.size(); ++b)
      if (pair_of(mine[a]) == pair_of(mine[b]) && mine[b] < mine[a]) std::swap(mine[a], mine[b]);
  std::vector<std::pair<std::size_t, bool>> out;
  for (std::size_t k : mine) out.emplace_back(k / 2, k % 2 == 1);
  return out;
}

}  // namespace purlin::test_patterns
