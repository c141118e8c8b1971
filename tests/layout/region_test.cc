// Region arithmetic of every layout kind, fixed and V, for rank r of n in {1, 2, 3, 4, 8}.
#include "layout/layout.h"

#include <gtest/gtest.h>

#include <vector>

#include "reference.h"

namespace purlin::layout {
namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 8};

TEST(FixedShape, UniformPartitionsAreTheApiCount) {
  for (int n : kRankCounts) {
    for (std::size_t c : {0u, 1u, 3u, 1000u}) {
      const FixedShape s = FixedShape::uniform(c, n);
      EXPECT_EQ(s.extent(), c * n);
      EXPECT_EQ(s.max_size(), c);
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(s.offset(k), k * c);
        EXPECT_EQ(s.size(k), c);
      }
    }
  }
}

TEST(FixedShape, SplitKeepsTheTailAndAlignsStarts) {
  // 10 elements over 4 ranks: stride ceil(10/4) = 3, the last partition is short.
  const FixedShape a = FixedShape::split(10, 4);
  EXPECT_EQ(a.stride, 3u);
  EXPECT_EQ((std::vector<std::size_t>{a.size(0), a.size(1), a.size(2), a.size(3)}),
            (std::vector<std::size_t>{3, 3, 3, 1}));
  // Granule 4: starts at multiples of 4; the partitions after the tail are empty.
  const FixedShape b = FixedShape::split(10, 4, 4);
  EXPECT_EQ((std::vector<std::size_t>{b.size(0), b.size(1), b.size(2), b.size(3)}),
            (std::vector<std::size_t>{4, 4, 2, 0}));
  EXPECT_EQ(b.offset(3), 10u);
  // Fewer elements than ranks.
  const FixedShape c = FixedShape::split(1, 8);
  EXPECT_EQ(c.size(0), 1u);
  for (int k = 1; k < 8; ++k) EXPECT_EQ(c.size(k), 0u);
  // Empty, and granule 0 treated as 1.
  const FixedShape d = FixedShape::split(0, 3, 0);
  for (int k = 0; k < 3; ++k) EXPECT_EQ((Region{d.offset(k), d.size(k)}), (Region{0, 0}));
  // Sizes near the top of the range do not wrap in ceil_div.
  const std::size_t huge = ~std::size_t{0} - 5;
  EXPECT_EQ(FixedShape::split(huge, 1).size(0), huge);

  for (int n : kRankCounts) {
    for (std::size_t total : {0u, 1u, 7u, 13u, 64u, 1001u}) {
      for (std::size_t g : {1u, 2u, 8u}) {
        const FixedShape s = FixedShape::split(total, n, g);
        std::size_t covered = 0;
        for (int k = 0; k < n; ++k) {
          if (s.size(k) != 0) {
            EXPECT_EQ(s.offset(k) % g, 0u);
          }
          EXPECT_EQ(s.offset(k), covered);
          covered += s.size(k);
        }
        EXPECT_EQ(covered, total) << "n=" << n << " total=" << total << " g=" << g;
      }
    }
  }
}

TEST(FixedShape, SplitAroundLeavesOnePartitionEmptyAndCoversTheRest) {
  // 10 elements over 4 ranks around rank 1: split over 3 places (stride 4), rank 1 empty.
  const FixedShape a = FixedShape::split_around(10, 4, 1);
  EXPECT_EQ(a.stride, 4u);
  EXPECT_EQ((std::vector<std::size_t>{a.size(0), a.size(1), a.size(2), a.size(3)}),
            (std::vector<std::size_t>{4, 0, 4, 2}));
  EXPECT_EQ((std::vector<std::size_t>{a.offset(0), a.offset(2), a.offset(3)}),
            (std::vector<std::size_t>{0, 4, 8}));
  EXPECT_EQ(a.max_size(), 4u);
  // One rank keeps the whole buffer; an out-of-range rank leaves the plain split.
  EXPECT_EQ(FixedShape::split_around(10, 1, 0).size(0), 10u);
  EXPECT_EQ(FixedShape::split_around(10, 4, -1).size(1), FixedShape::split(10, 4).size(1));

  for (int n : kRankCounts) {
    for (int e = 0; e < n; ++e) {
      for (std::size_t total : {0u, 1u, 7u, 13u, 64u, 1001u}) {
        for (std::size_t g : {1u, 2u, 8u}) {
          const FixedShape s = FixedShape::split_around(total, n, e, g);
          std::size_t covered = 0;
          for (int k = 0; k < n; ++k) {
            if (n > 1 && k == e) {
              EXPECT_EQ(s.size(k), 0u);
            }
            if (s.size(k) != 0) {
              EXPECT_EQ(s.offset(k) % g, 0u);
              EXPECT_EQ(s.offset(k), covered);
            }
            covered += s.size(k);
          }
          EXPECT_EQ(covered, total) << "n=" << n << " e=" << e << " total=" << total;
        }
      }
    }
  }
}

TEST(VariableShape, OffsetsFromCountsOrDisplacements) {
  const std::vector<std::size_t> counts = {3, 0, 2, 0, 5};
  const VariableShape packed_in_order{counts.data(), nullptr, 5};
  EXPECT_EQ(packed_in_order.offset(0), 0u);
  EXPECT_EQ(packed_in_order.offset(2), 3u);
  EXPECT_EQ(packed_in_order.offset(4), 5u);
  EXPECT_EQ(packed_in_order.extent(), 10u);
  EXPECT_EQ(packed_in_order.max_size(), 5u);

  const std::vector<std::size_t> displs = {10, 1000, 0, 1000, 2};  // out of order, unused 1000s
  const VariableShape shuffled{counts.data(), displs.data(), 5};
  EXPECT_EQ(shuffled.offset(0), 10u);
  EXPECT_EQ(shuffled.offset(4), 2u);
  EXPECT_EQ(shuffled.extent(), 13u);  // empty partitions' displacements do not count

  const std::vector<std::size_t> zeros = {0, 0, 0};
  EXPECT_EQ((VariableShape{zeros.data(), nullptr, 3}.extent()), 0u);
  EXPECT_EQ((VariableShape{zeros.data(), nullptr, 3}.max_size()), 0u);
}

TEST(Layouts, PackedHoldsOnlyTheOwnPartition) {
  for (int n : kRankCounts) {
    const FixedShape s = FixedShape::uniform(6, n);
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(Packed::extent(s, r), 6u);
      EXPECT_EQ(Packed::regions(n), 1);
      for (int k = 0; k < n; ++k) {
        EXPECT_EQ(Packed::holds(r, k), k == r);
        EXPECT_EQ(Packed::region(s, r, k), k == r ? (Region{0, 6}) : Region{});
      }
      test::expect_tiles<Packed>(s, r, n);
    }
  }
}

TEST(Layouts, ScatteredAndTransposedHoldEveryPartition) {
  for (int n : kRankCounts) {
    const FixedShape s = FixedShape::split(10 * n + 3, n, 4);
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < n; ++k) {
        EXPECT_TRUE(Scattered::holds(r, k));
        EXPECT_EQ(Scattered::region(s, r, k), (Region{s.offset(k), s.size(k)}));
        EXPECT_EQ(Transposed::region(s, r, k), Scattered::region(s, r, k));
      }
      EXPECT_EQ(Scattered::extent(s, r), s.total);
      test::expect_tiles<Scattered>(s, r, n);
      test::expect_tiles<Transposed>(s, r, n);
    }
  }
}

TEST(Layouts, VFormsWithZeroPartitions) {
  for (int n : kRankCounts) {
    std::vector<std::size_t> counts(n);
    for (int k = 0; k < n; ++k) counts[k] = k % 3 == 1 ? 0 : static_cast<std::size_t>(k + 2);
    const VariableShape s{counts.data(), nullptr, n};
    std::size_t offset = 0;
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(PackedV::region(s, r, r), (Region{0, counts[r]}));
      EXPECT_EQ(PackedV::extent(s, r), counts[r]);
      EXPECT_EQ(ScatteredV::region(s, 0, r), (Region{offset, counts[r]}));
      EXPECT_EQ(TransposedV::region(s, 0, r), (Region{offset, counts[r]}));
      offset += counts[r];
      test::expect_tiles<PackedV>(s, r, n);
      test::expect_tiles<ScatteredV>(s, r, n);
      test::expect_tiles<TransposedV>(s, r, n);
    }
    EXPECT_EQ(ScatteredV::extent(s, 0), offset);
  }
}

TEST(Region, BytesScaleOffsetAndSize) {
  constexpr Region r{3, 5};
  static_assert(r.end() == 8 && !r.empty());
  static_assert(r.in_bytes(2) == Region{6, 10});
  static_assert(Region{7, 0}.empty());
  EXPECT_EQ(r.in_bytes(8), (Region{24, 40}));
}

}  // namespace
}  // namespace purlin::layout
