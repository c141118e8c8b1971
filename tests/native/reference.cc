#include "reference.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/wrapping.h"
#include "values.h"

namespace purlin::native_test {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;  // elements per reference task

template <class E, Op K>
struct Reference {
  using A = Acc<E>;
  std::vector<A> scale;  // PreMulSum: rank k's own scalar, widened
  int n = 1;

  // PreMulSum: rank k's contribution times rank k's scalar, rounded to the element type (as
  // NCCL and Purlin's stagers do), then widened again for the sum.
  A contribution(A x, int k) const {
    if constexpr (K == Op::kPreMulHost || K == Op::kPreMulDevice) {
      return widen(narrow<E>(purlin::test::wrapping_mul(x, scale[static_cast<std::size_t>(k)])));
    } else {
      return x;
    }
  }
  static A combine(A a, A b) {
    if constexpr (K == Op::kProd) return purlin::test::wrapping_mul(a, b);
    else if constexpr (K == Op::kMax) return a < b ? b : a;
    else if constexpr (K == Op::kMin) return b < a ? b : a;
    else return purlin::test::wrapping_add(a, b);  // sum, avg, premulsum
  }
  E finish(A a) const {
    if constexpr (K == Op::kAvg) {
      if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
        a = static_cast<A>(static_cast<std::int64_t>(a) / static_cast<std::int64_t>(n));
      } else if constexpr (std::is_integral_v<A>) {
        a = static_cast<A>(static_cast<std::uint64_t>(a) / static_cast<std::uint64_t>(n));
      } else {
        a = a * (A{1} / static_cast<A>(n));
      }
    }
    return narrow<E>(a);
  }
};

template <class E, Op K>
void reduce_range(int n, std::size_t src, std::size_t begin, std::size_t end, E* out) {
  const Table<E>& t = table<E>();
  Reference<E, K> r;
  r.n = n;
  for (int k = 0; k < n; ++k) {
    if constexpr (K == Op::kPreMulHost) r.scale.push_back(widen(host_scalar<E>(k)));
    if constexpr (K == Op::kPreMulDevice) r.scale.push_back(widen(device_scalar<E>(k)));
  }
  for (std::size_t i = begin; i < end; ++i) {
    auto a = r.contribution(t.wide[value_index(0, src + i)], 0);
    for (int k = 1; k < n; ++k) {
      a = r.combine(a, r.contribution(t.wide[value_index(k, src + i)], k));
    }
    out[i] = r.finish(a);
  }
}

template <class E>
void reduce_dispatch(Op op, int n, std::size_t src, std::size_t begin, std::size_t end, E* out) {
  switch (op) {
    case Op::kSum: reduce_range<E, Op::kSum>(n, src, begin, end, out); break;
    case Op::kProd: reduce_range<E, Op::kProd>(n, src, begin, end, out); break;
    case Op::kMax: reduce_range<E, Op::kMax>(n, src, begin, end, out); break;
    case Op::kMin: reduce_range<E, Op::kMin>(n, src, begin, end, out); break;
    case Op::kAvg: reduce_range<E, Op::kAvg>(n, src, begin, end, out); break;
    case Op::kPreMulHost: reduce_range<E, Op::kPreMulHost>(n, src, begin, end, out); break;
    case Op::kPreMulDevice: reduce_range<E, Op::kPreMulDevice>(n, src, begin, end, out); break;
  }
}

}  // namespace

void parallel_tasks(std::size_t tasks, const std::function<void(std::size_t)>& fn, bool parallel) {
  const std::size_t threads =
      parallel ? std::min<std::size_t>(tasks, std::max(1u, std::thread::hardware_concurrency())) : 1;
  if (threads <= 1) {
    for (std::size_t i = 0; i < tasks; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < tasks; i = next++) fn(i);
    });
  }
  for (auto& th : pool) th.join();
}

void reference_reduce(ncclDataType_t t, Op op, int n, std::size_t src, std::size_t len, void* out) {
  with_type(t, [&]<class E>() {
    E* o = static_cast<E*>(out);
    parallel_tasks((len + kChunk - 1) / kChunk, [&](std::size_t task) {
      const std::size_t begin = task * kChunk;
      reduce_dispatch<E>(op, n, src, begin, std::min(len, begin + kChunk), o);
    });
  });
}

void reference_input(ncclDataType_t t, int rank, std::size_t src, std::size_t len, void* out) {
  // Typed copies: with the element size known at compile time each element is one load and store.
  with_type(t, [&]<class E>() {
    const Table<E>& values = table<E>();
    E* o = static_cast<E*>(out);
    for (std::size_t i = 0; i < len; ++i) o[i] = values.value[value_index(rank, src + i)];
  });
}

}  // namespace purlin::native_test
