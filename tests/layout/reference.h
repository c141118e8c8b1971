// A host interpreter for collective declarations, used only by tests.
//
// It runs a declaration's data flow on labelled integers using nothing but the layout layer
// (Collective::source, is_producer/is_consumer, Layout::region), and records who read what.
// Tests compare its output with NCCL's semantics written out by hand and compare the recorded
// reads with the derived notify relation, so the derivations are checked against an
// independent statement of what each collective means.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "layout/collective.h"

namespace purlin::layout::test {

using Value = std::int64_t;
using Buffer = std::vector<Value>;
inline constexpr Value kUntouched = -1;

// Distinct per (rank, index); sums over ranks stay distinct per index, so a reduction over the
// wrong ranks or the wrong offset shows.
inline Value label(int rank, std::size_t i) {
  return (static_cast<Value>(rank + 1) << 32) + static_cast<Value>(i);
}

struct Flow {
  std::vector<Buffer> out;
  std::vector<std::vector<int>> writes;                // per output element, times written
  std::vector<std::vector<std::set<int>>> consumers;   // [rank][input partition] -> readers
};

template <class L>
std::vector<Buffer> labelled_buffers(const std::vector<typename L::Shape>& shapes) {
  std::vector<Buffer> bufs(shapes.size());
  for (std::size_t r = 0; r < shapes.size(); ++r) {
    bufs[r].resize(L::extent(shapes[r], static_cast<int>(r)));
    for (std::size_t i = 0; i < bufs[r].size(); ++i) bufs[r][i] = label(static_cast<int>(r), i);
  }
  return bufs;
}

template <class L>
Flow blank_run(const std::vector<typename L::Shape>& shapes, int ranks) {
  Flow run;
  run.out.resize(shapes.size());
  run.writes.resize(shapes.size());
  run.consumers.assign(static_cast<std::size_t>(ranks),
                       std::vector<std::set<int>>(static_cast<std::size_t>(ranks)));
  for (std::size_t r = 0; r < shapes.size(); ++r) {
    run.out[r].assign(L::extent(shapes[r], static_cast<int>(r)), kUntouched);
    run.writes[r].assign(run.out[r].size(), 0);
  }
  return run;
}

// One phase: every consumer fills each output region from the input region source() names.
template <class C>
Flow run_phase(const std::vector<typename C::Input::Shape>& in_shapes,
              const std::vector<Buffer>& in,
              const std::vector<typename C::Output::Shape>& out_shapes, int root) {
  using In = typename C::Input;
  using Out = typename C::Output;
  const int n = static_cast<int>(in_shapes.size());
  Flow run = blank_run<Out>(out_shapes, n);
  for (int r = 0; r < n; ++r) {
    if (!C::is_consumer(r, root)) continue;
    for (int k = 0; k < n; ++k) {
      if (!Out::holds(r, k)) continue;
      const Region dst = Out::region(out_shapes[r], r, k);
      const Source src = C::source(r, k, root);
      const int first = src.rank == kAllRanks ? 0 : src.rank;
      const int last = src.rank == kAllRanks ? n - 1 : src.rank;
      for (std::size_t i = 0; i < dst.size; ++i) run.out[r].at(dst.offset + i) = 0;
      for (int j = first; j <= last; ++j) {  // ascending rank order, as Atom::reduce
        EXPECT_TRUE(C::is_producer(j, root)) << "rank " << r << " reads non-producer " << j;
        EXPECT_TRUE(In::holds(j, src.partition));
        const Region s = In::region(in_shapes[j], j, src.partition);
        EXPECT_EQ(s.size, dst.size) << "rank " << r << " region " << k << " from " << j;
        run.consumers[j][src.partition].insert(r);
        for (std::size_t i = 0; i < dst.size && i < s.size; ++i) {
          run.out[r].at(dst.offset + i) += in[j].at(s.offset + i);
        }
      }
      for (std::size_t i = 0; i < dst.size; ++i) ++run.writes[r].at(dst.offset + i);
    }
  }
  return run;
}

// The notify relation must be exactly the set of readers the data flow produced.
template <class C>
void expect_notify_matches(const Flow& run, int root) {
  const int n = static_cast<int>(run.consumers.size());
  for (int j = 0; j < n; ++j) {
    for (int m = 0; m < n; ++m) {
      int readers = 0;
      for (int p = 0; p < n; ++p) {
        const bool reads = run.consumers[j][m].count(p) != 0;
        readers += reads ? 1 : 0;
        EXPECT_EQ(C::notifies(j, m, p, root), reads)
            << "rank " << j << " partition " << m << " peer " << p << " root " << root;
      }
      EXPECT_EQ(C::fan_out(j, m, n, root), readers);
    }
  }
}

// Every consumer's output element is written exactly once, every other one never.
template <class C>
void expect_written_once(const Flow& run, int root) {
  for (std::size_t r = 0; r < run.writes.size(); ++r) {
    const int want = C::is_consumer(static_cast<int>(r), root) ? 1 : 0;
    for (std::size_t i = 0; i < run.writes[r].size(); ++i) {
      ASSERT_EQ(run.writes[r][i], want) << "rank " << r << " element " << i;
    }
  }
}

// Regions of the partitions a buffer holds tile [0, extent) exactly: no gap, no overlap.
template <class L>
void expect_tiles(const typename L::Shape& shape, int rank, int ranks) {
  std::vector<int> cover(L::extent(shape, rank), 0);
  for (int k = 0; k < ranks; ++k) {
    const Region reg = L::region(shape, rank, k);
    if (!L::holds(rank, k)) {
      EXPECT_TRUE(reg.empty());
      continue;
    }
    ASSERT_LE(reg.end(), cover.size()) << "rank " << rank << " partition " << k;
    for (std::size_t i = reg.offset; i < reg.end(); ++i) ++cover[i];
  }
  for (std::size_t i = 0; i < cover.size(); ++i) {
    ASSERT_EQ(cover[i], 1) << "rank " << rank << " element " << i;
  }
}

}  // namespace purlin::layout::test
