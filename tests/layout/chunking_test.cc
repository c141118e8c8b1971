// Chunk counts and ranges: sizes 0, 1, odd, not a multiple of the chunk; never splitting an
// element; and the V launch chunk count (maximum over ranks).
#include "layout/chunking.h"

#include <gtest/gtest.h>

#include <vector>

namespace purlin::layout {
namespace {

TEST(Chunking, StrideIsWholeElementsAndAtLeastOne) {
  EXPECT_EQ(Chunking::make(4096, 4).stride, 4096u);
  EXPECT_EQ(Chunking::make(4097, 4).stride, 4096u);  // rounded down to whole elements
  EXPECT_EQ(Chunking::make(10, 8).stride, 8u);
  EXPECT_EQ(Chunking::make(3, 8).stride, 8u);  // smaller than an element: one element
  EXPECT_EQ(Chunking::make(0, 2).stride, 2u);  // 0 still makes progress
  EXPECT_EQ(Chunking::make(7, 0).stride, 7u);  // element size 0 treated as bytes
  EXPECT_EQ(Chunking::make(100, 6).stride, 96u);  // a non power-of-two element
}

TEST(Chunking, EdgeSizes) {
  const Chunking ch = Chunking::make(16, 4);
  EXPECT_EQ(ch.count(0), 0u);
  EXPECT_EQ(ch.range(0, 0), (Region{0, 0}));
  EXPECT_EQ(ch.count(4), 1u);
  EXPECT_EQ(ch.range(4, 0), (Region{0, 4}));
  EXPECT_EQ(ch.count(16), 1u);
  EXPECT_EQ(ch.count(17), 2u);  // a partial element still gets a chunk, nothing dropped
  EXPECT_EQ(ch.range(17, 1), (Region{16, 1}));
  EXPECT_EQ(ch.count(36), 3u);
  EXPECT_EQ(ch.range(36, 2), (Region{32, 4}));
  EXPECT_EQ(ch.range(36, 3), (Region{36, 0}));    // past the end: empty at the end
  EXPECT_EQ(ch.range(36, 1000), (Region{36, 0}));  // no overflow for wild ordinals

  const Chunking bytes = Chunking::make(1, 1);
  EXPECT_EQ(bytes.count(1), 1u);
  EXPECT_EQ(bytes.range(1, 0), (Region{0, 1}));
  EXPECT_EQ(chunk_count(7, 2, 1), 4u);
  EXPECT_EQ(chunk_range(7, 2, 1, 3), (Region{6, 1}));

  const std::size_t huge = ~std::size_t{0} - 3;
  EXPECT_EQ(Chunking::make(1, 1).count(huge), huge);
  EXPECT_EQ(Chunking::make(huge, 1).count(huge), 1u);
}

// For every size and element size: ranges are contiguous, cover the partition exactly, start on
// element boundaries, and all but the last are full.
TEST(Chunking, RangesTileEveryPartition) {
  for (std::size_t elem : {1u, 2u, 4u, 8u, 6u}) {
    for (std::size_t chunk : {0u, 1u, 3u, 7u, 16u, 64u, 100u}) {
      const Chunking ch = Chunking::make(chunk, elem);
      for (std::size_t elems = 0; elems < 70; ++elems) {
        const std::size_t bytes = elems * elem;
        const std::uint64_t n = ch.count(bytes);
        std::size_t next = 0;
        for (std::uint64_t c = 0; c < n; ++c) {
          const Region r = ch.range(bytes, c);
          ASSERT_EQ(r.offset, next) << elem << " " << chunk << " " << bytes << " " << c;
          ASSERT_EQ(r.offset % elem, 0u);
          ASSERT_EQ(r.size % elem, 0u);
          ASSERT_GT(r.size, 0u);
          if (c + 1 < n) {
            ASSERT_EQ(r.size, ch.stride);
          }
          next = r.end();
        }
        ASSERT_EQ(next, bytes);
      }
    }
  }
}

// The division helpers skip the division where the answer needs none (a <= b, a < b): they must
// agree with plain division on both sides of that boundary and at the top of the range.
TEST(Chunking, DivisionHelpersMatchPlainDivision) {
  const std::size_t top = ~std::size_t{0};
  const std::vector<std::size_t> values = {0, 1, 2, 7, 8, 9, 15, 16, 17, 4095, 4096, 4097, top - 1, top};
  for (std::size_t a : values) {
    for (std::size_t b : values) {
      if (b == 0) continue;
      EXPECT_EQ(detail::ceil_div(a, b), a == 0 ? 0 : (a - 1) / b + 1) << a << " " << b;
      EXPECT_EQ(detail::quotient(a, b), a / b) << a << " " << b;
      EXPECT_EQ(detail::remainder(a, b), a % b) << a << " " << b;
    }
  }
}

TEST(Chunking, AbsoluteRangesAddThePartitionOffset) {
  const Chunking ch = Chunking::make(8, 2);
  const Region partition{100, 20};
  EXPECT_EQ(ch.range(partition, 0), (Region{100, 8}));
  EXPECT_EQ(ch.range(partition, 2), (Region{116, 4}));
  EXPECT_EQ(ch.range(partition, 3), (Region{120, 0}));
}

TEST(Chunking, LaunchChunksAreTheMaximumOverRanks) {
  const Chunking ch = Chunking::make(64, 4);
  const std::vector<std::size_t> counts = {0, 16, 17, 3, 0};  // elements
  EXPECT_EQ(launch_chunks(VariableShape{counts.data(), nullptr, 5}, 4, ch), 2u);
  const std::vector<std::size_t> zeros = {0, 0};
  EXPECT_EQ(launch_chunks(VariableShape{zeros.data(), nullptr, 2}, 4, ch), 0u);
  // Fixed split: partition 0 is the largest.
  EXPECT_EQ(launch_chunks(FixedShape::split(100, 3), 4, ch), 3u);  // 34 elements = 136 bytes
  EXPECT_EQ(launch_chunks(FixedShape::uniform(16, 8), 4, ch), 1u);
}

static_assert(Chunking::make(16, 4).count(33) == 3);
static_assert(chunk_range(33, 16, 1, 2) == Region{32, 1});

}  // namespace
}  // namespace purlin::layout
