// All eleven collectives, run through the reference interpreter for n in {1, 2, 3, 4, 8} and
// compared with NCCL's semantics written out independently of the layout layer. Each run also
// checks that the layouts tile every buffer, that every output element is written exactly once,
// and that the derived notify relation equals the readers the data flow produced.
#include "layout/collectives.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <numeric>
#include <vector>

#include "reference.h"

namespace purlin::layout::test {
namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 8};
constexpr std::size_t kCounts[] = {0, 1, 3, 5};
constexpr std::size_t kTotals[] = {0, 1, 7, 13, 64, 1001};
constexpr std::size_t kGranules[] = {1, 4};

template <class C>
void expect_tiling(const std::vector<typename C::Input::Shape>& in_shapes,
                   const std::vector<typename C::Output::Shape>& out_shapes, int root) {
  const int n = static_cast<int>(in_shapes.size());
  for (int r = 0; r < n; ++r) {
    if (C::is_producer(r, root)) expect_tiles<typename C::Input>(in_shapes[r], r, n);
    if (C::is_consumer(r, root)) expect_tiles<typename C::Output>(out_shapes[r], r, n);
  }
}

template <class C>
Flow run_single(const std::vector<typename C::Input::Shape>& in_shapes,
               const std::vector<typename C::Output::Shape>& out_shapes, int root = 0) {
  expect_tiling<C>(in_shapes, out_shapes, root);
  const Flow run = run_phase<C>(in_shapes, labelled_buffers<typename C::Input>(in_shapes),
                               out_shapes, root);
  expect_notify_matches<C>(run, root);
  expect_written_once<C>(run, root);
  return run;
}

// Compositions: F writes the packed intermediate, G consumes it, as one kernel would.
template <class C>
Flow run_composed(const std::vector<FixedShape>& shapes, int root) {
  using F = typename C::First;
  using G = typename C::Last;
  expect_tiling<F>(shapes, shapes, root);
  expect_tiling<G>(shapes, shapes, root);
  const Flow mid = run_phase<F>(shapes, labelled_buffers<typename C::Input>(shapes), shapes, root);
  expect_notify_matches<F>(mid, root);
  const Flow out = run_phase<G>(shapes, mid.out, shapes, root);
  expect_notify_matches<G>(out, root);
  expect_written_once<C>(out, root);
  for (int r = 0; r < static_cast<int>(shapes.size()); ++r) {
    if (!C::intermediate_in_output(r, root)) continue;
    const Region own = C::Output::region(shapes[r], r, r);
    const Buffer slice(out.out[r].begin() + static_cast<std::ptrdiff_t>(own.offset),
                       out.out[r].begin() + static_cast<std::ptrdiff_t>(own.end()));
    EXPECT_EQ(slice, mid.out[r]) << "rank " << r << ": intermediate is not where G writes it";
  }
  return out;
}

Value sum_over_ranks(int n, std::size_t i) {
  Value s = 0;
  for (int j = 0; j < n; ++j) s += label(j, i);
  return s;
}

std::vector<std::size_t> prefix(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> d(counts.size(), 0);
  std::exclusive_scan(counts.begin(), counts.end(), d.begin(), std::size_t{0});
  return d;
}

// Per-partition counts for the V collectives, zeros included.
std::vector<std::vector<std::size_t>> v_patterns(int n) {
  std::vector<std::vector<std::size_t>> out;
  for (int p = 0; p < 3; ++p) {
    std::vector<std::size_t> c(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) c[k] = static_cast<std::size_t>((k * 7 + p * 3) % 5);
    out.push_back(c);
  }
  out.emplace_back(static_cast<std::size_t>(n), 0);  // all empty
  std::vector<std::size_t> single(static_cast<std::size_t>(n), 0);
  single.back() = 9;
  out.push_back(single);
  return out;
}

TEST(Collectives, AllGather) {
  for (int n : kRankCounts) {
    for (std::size_t c : kCounts) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " count=" << c);
      const std::vector<FixedShape> shapes(n, FixedShape::uniform(c, n));
      const Flow run = run_single<AllGather>(shapes, shapes);
      for (int r = 0; r < n; ++r) {
        Buffer want;
        for (int k = 0; k < n; ++k) {
          for (std::size_t i = 0; i < c; ++i) want.push_back(label(k, i));
        }
        EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

TEST(Collectives, ReduceScatter) {
  for (int n : kRankCounts) {
    for (std::size_t c : kCounts) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " count=" << c);
      const std::vector<FixedShape> shapes(n, FixedShape::uniform(c, n));
      const Flow run = run_single<ReduceScatter>(shapes, shapes);
      for (int r = 0; r < n; ++r) {
        Buffer want;
        for (std::size_t i = 0; i < c; ++i) want.push_back(sum_over_ranks(n, r * c + i));
        EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

TEST(Collectives, AllToAll) {
  for (int n : kRankCounts) {
    for (std::size_t c : kCounts) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " count=" << c);
      const std::vector<FixedShape> shapes(n, FixedShape::uniform(c, n));
      const Flow run = run_single<AllToAll>(shapes, shapes);
      for (int r = 0; r < n; ++r) {
        Buffer want;
        for (int k = 0; k < n; ++k) {
          for (std::size_t i = 0; i < c; ++i) want.push_back(label(k, r * c + i));
        }
        EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

TEST(Collectives, ScatterFromEveryRoot) {
  for (int n : kRankCounts) {
    for (std::size_t c : kCounts) {
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " count=" << c << " root=" << root);
        const std::vector<FixedShape> shapes(n, FixedShape::uniform(c, n));
        const Flow run = run_single<Scatter>(shapes, shapes, root);
        for (int r = 0; r < n; ++r) {
          Buffer want;
          for (std::size_t i = 0; i < c; ++i) want.push_back(label(root, r * c + i));
          EXPECT_EQ(run.out[r], want);
        }
      }
    }
  }
}

TEST(Collectives, GatherToEveryRoot) {
  for (int n : kRankCounts) {
    for (std::size_t c : kCounts) {
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " count=" << c << " root=" << root);
        const std::vector<FixedShape> shapes(n, FixedShape::uniform(c, n));
        const Flow run = run_single<Gather>(shapes, shapes, root);
        for (int r = 0; r < n; ++r) {
          Buffer want(n * c, kUntouched);  // non-roots' outputs stay untouched
          if (r == root) {
            want.clear();
            for (int k = 0; k < n; ++k) {
              for (std::size_t i = 0; i < c; ++i) want.push_back(label(k, i));
            }
          }
          EXPECT_EQ(run.out[r], want);
        }
      }
    }
  }
}

TEST(Collectives, AllReduce) {
  for (int n : kRankCounts) {
    for (std::size_t total : kTotals) {
      for (std::size_t g : kGranules) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " total=" << total << " granule=" << g);
        const std::vector<FixedShape> shapes(n, FixedShape::split(total, n, g));
        const Flow run = run_composed<AllReduce>(shapes, 0);
        Buffer want;
        for (std::size_t i = 0; i < total; ++i) want.push_back(sum_over_ranks(n, i));
        for (int r = 0; r < n; ++r) EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

TEST(Collectives, BroadcastFromEveryRoot) {
  for (int n : kRankCounts) {
    for (std::size_t total : kTotals) {
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " total=" << total << " root=" << root);
        const std::vector<FixedShape> shapes(n, FixedShape::split(total, n, 4));
        const Flow run = run_composed<Broadcast>(shapes, root);
        Buffer want;
        for (std::size_t i = 0; i < total; ++i) want.push_back(label(root, i));
        for (int r = 0; r < n; ++r) EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

TEST(Collectives, ReduceToEveryRoot) {
  for (int n : kRankCounts) {
    for (std::size_t total : kTotals) {
      for (int root = 0; root < n; ++root) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " total=" << total << " root=" << root);
        const std::vector<FixedShape> shapes(n, FixedShape::split(total, n, 1));
        const Flow run = run_composed<Reduce>(shapes, root);
        for (int r = 0; r < n; ++r) {
          Buffer want(total, kUntouched);
          if (r == root) {
            for (std::size_t i = 0; i < total; ++i) want[i] = sum_over_ranks(n, i);
          }
          EXPECT_EQ(run.out[r], want);
        }
      }
    }
  }
}

TEST(Collectives, AllGatherV) {
  for (int n : kRankCounts) {
    for (const auto& counts : v_patterns(n)) {
      const std::vector<std::size_t> displs = prefix(counts);
      for (const std::size_t* d : {static_cast<const std::size_t*>(nullptr), displs.data()}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " displs=" << (d ? "explicit" : "null"));
        const std::vector<VariableShape> shapes(n, VariableShape{counts.data(), d, n});
        const Flow run = run_single<AllGatherV>(shapes, shapes);
        for (int r = 0; r < n; ++r) {
          Buffer want;
          for (int k = 0; k < n; ++k) {
            for (std::size_t i = 0; i < counts[k]; ++i) want.push_back(label(k, i));
          }
          EXPECT_EQ(run.out[r], want);
        }
      }
    }
  }
}

TEST(Collectives, ReduceScatterV) {
  for (int n : kRankCounts) {
    for (const auto& counts : v_patterns(n)) {
      const std::vector<std::size_t> displs = prefix(counts);
      for (const std::size_t* d : {static_cast<const std::size_t*>(nullptr), displs.data()}) {
        SCOPED_TRACE(testing::Message() << "n=" << n << " displs=" << (d ? "explicit" : "null"));
        const std::vector<VariableShape> shapes(n, VariableShape{counts.data(), d, n});
        const Flow run = run_single<ReduceScatterV>(shapes, shapes);
        for (int r = 0; r < n; ++r) {
          Buffer want;
          for (std::size_t i = 0; i < counts[r]; ++i) {
            want.push_back(sum_over_ranks(n, displs[r] + i));
          }
          EXPECT_EQ(run.out[r], want);
        }
      }
    }
  }
}

TEST(Collectives, AllToAllV) {
  for (int n : kRankCounts) {
    for (int p = 0; p < 4; ++p) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " pattern=" << p);
      // sent[j][k]: elements rank j sends to rank k, zeros included.
      std::vector<std::vector<std::size_t>> sent(n, std::vector<std::size_t>(n));
      std::vector<std::vector<std::size_t>> recv(n, std::vector<std::size_t>(n));
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < n; ++k) sent[j][k] = static_cast<std::size_t>((j * 5 + k * 3 + p) % 4);
      }
      for (int r = 0; r < n; ++r) {
        for (int k = 0; k < n; ++k) recv[r][k] = sent[k][r];
      }
      std::vector<std::vector<std::size_t>> sdispls(n), rdispls(n);
      std::vector<VariableShape> in_shapes, out_shapes;
      for (int r = 0; r < n; ++r) {
        sdispls[r] = prefix(sent[r]);
        rdispls[r] = prefix(recv[r]);
        in_shapes.push_back({sent[r].data(), sdispls[r].data(), n});
        out_shapes.push_back({recv[r].data(), p % 2 == 0 ? nullptr : rdispls[r].data(), n});
      }
      const Flow run = run_single<AllToAllV>(in_shapes, out_shapes);
      for (int r = 0; r < n; ++r) {
        Buffer want;
        for (int k = 0; k < n; ++k) {
          for (std::size_t i = 0; i < sent[k][r]; ++i) want.push_back(label(k, sdispls[k][r] + i));
        }
        EXPECT_EQ(run.out[r], want);
      }
    }
  }
}

// Displacements with holes (MPI-style): holes are never written; everything else once.
TEST(Collectives, AllGatherVLeavesDisplacementHolesUntouched) {
  const int n = 3;
  const std::vector<std::size_t> counts = {2, 0, 3};
  const std::vector<std::size_t> displs = {1, 99, 5};  // holes at 0, 3, 4; unused displ for 0
  const std::vector<VariableShape> shapes(n, VariableShape{counts.data(), displs.data(), n});
  EXPECT_EQ(ScatteredV::extent(shapes[0], 0), 8u);
  const Flow run = run_phase<AllGatherV>(shapes, labelled_buffers<PackedV>(shapes), shapes, 0);
  for (int r = 0; r < n; ++r) {
    const Buffer want = {kUntouched, label(0, 0), label(0, 1), kUntouched,
                         kUntouched, label(2, 0), label(2, 1), label(2, 2)};
    EXPECT_EQ(run.out[r], want);
    EXPECT_EQ(run.writes[r], (std::vector<int>{0, 1, 1, 0, 0, 1, 1, 1}));
  }
}

TEST(Collectives, FanInAndOutMatchTheTable) {
  const int n = 8;
  const int root = 3;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(AllGather::fan_out(r, r, n, root), n);  // packed: every peer
    EXPECT_EQ(AllGather::fan_in(r, n, root), n);      // one flag per peer region
    EXPECT_EQ(ReduceScatter::fan_out(r, 5, n, root), 1);  // scattered: the owner only
    EXPECT_EQ(ReduceScatter::fan_in(r, n, root), n);      // reduce over all ranks
    EXPECT_EQ(Scatter::fan_out(r, 5, n, root), r == root ? 1 : 0);
    EXPECT_EQ(Scatter::fan_in(r, n, root), 1);
    EXPECT_EQ(Gather::fan_out(r, r, n, root), 1);
    EXPECT_EQ(Gather::fan_in(r, n, root), r == root ? n : 0);
    EXPECT_EQ(AllToAll::fan_in(r, n, root), n);
  }
}

TEST(Collectives, InPlaceOffsetsFollowNccl) {
  for (int n : kRankCounts) {
    const FixedShape s = FixedShape::uniform(7, n);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(AllGather::in_place_offset(s, r), 7u * r);      // sendbuff = recvbuff + r*count
      EXPECT_EQ(ReduceScatter::in_place_offset(s, r), 7u * r);  // recvbuff = sendbuff + r*count
      EXPECT_EQ(Gather::in_place_offset(s, r), 7u * r);
      EXPECT_EQ(Scatter::in_place_offset(s, r), 7u * r);
      EXPECT_EQ(AllToAll::in_place_offset(s, r), 0u);
      EXPECT_EQ(AllReduce::in_place_offset(FixedShape::split(100, n, 4), r), 0u);
    }
    std::vector<std::size_t> counts(n);
    for (int k = 0; k < n; ++k) counts[k] = static_cast<std::size_t>(k % 2 == 0 ? 3 : 0);
    const VariableShape v{counts.data(), nullptr, n};
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(AllGatherV::in_place_offset(v, r), v.offset(r));
      EXPECT_EQ(ReduceScatterV::in_place_offset(v, r), v.offset(r));
    }
  }
}

}  // namespace
}  // namespace purlin::layout::test
