// Regions and partition shapes: how many elements each rank-indexed partition has and where
// it starts. Layouts (layout.h) decide which partitions a rank's buffer holds; shapes only do
// the arithmetic, so the same shape serves a collective's input, intermediate and output.
//
// Everything counts elements, not bytes: a partition boundary can then never split an element,
// and the NCCL API already speaks in counts. Region::in_bytes converts at the datapath boundary.
#pragma once

#include <cstddef>

#include "layout/host_device.h"

namespace purlin::layout {

// Half-open range [offset, offset + size) of a buffer.
struct Region {
  std::size_t offset = 0;
  std::size_t size = 0;

  PURLIN_HD constexpr std::size_t end() const { return offset + size; }
  PURLIN_HD constexpr bool empty() const { return size == 0; }
  PURLIN_HD constexpr Region in_bytes(std::size_t elem_bytes) const {
    return {offset * elem_bytes, size * elem_bytes};
  }
  // Written out rather than defaulted: nvcc does not accept execution-space attributes on a
  // defaulted comparison, and without them kernels could not compare regions.
  PURLIN_HD friend constexpr bool operator==(const Region& a, const Region& b) {
    return a.offset == b.offset && a.size == b.size;
  }
};

// Partitions whose sizes are known from one count: partition k spans
// [k * stride, (k + 1) * stride) clipped to `total`.
//
// Two constructors, because the API fixes the partition size for some collectives and leaves
// it to Purlin for others:
//  - uniform: AllGather, ReduceScatter, AllToAll, Scatter, Gather pass a per-rank count, so
//    every partition has exactly that many elements.
//  - split: AllReduce, Broadcast and Reduce pass one total that Purlin cuts into `ranks`
//    partitions. Partition starts are multiples of `granule` (elements) so that each one starts
//    on a vector boundary when the buffer does. The last non-empty partition takes the short
//    remainder and any after it are empty: no tail is dropped when `total` is not a multiple of
//    ranks * granule.
//  - split_around: split over every rank but one, whose partition is empty (Reduce: its root
//    gathers every partition, so it reduces none; collective.h: splits_around_root).
struct FixedShape {
  std::size_t stride = 0;  // elements between consecutive partition starts
  std::size_t total = 0;   // elements of the whole (scattered) buffer
  int ranks = 1;
  int empty = -1;  // the partition split_around leaves empty; -1: none

  PURLIN_HD static constexpr FixedShape uniform(std::size_t count, int ranks) {
    return {count, count * static_cast<std::size_t>(ranks), ranks};
  }

  PURLIN_HD static constexpr FixedShape split(std::size_t total, int ranks,
                                              std::size_t granule = 1) {
    const std::size_t g = granule == 0 ? 1 : granule;
    return {detail::round_up(detail::ceil_div(total, static_cast<std::size_t>(ranks)), g), total,
            ranks};
  }

  // As split over ranks - 1 partitions, in rank order with `empty`'s left out; one rank has no
  // other to give its share to, so it keeps the plain split.
  PURLIN_HD static constexpr FixedShape split_around(std::size_t total, int ranks, int empty,
                                                     std::size_t granule = 1) {
    if (ranks < 2 || empty < 0 || empty >= ranks) return split(total, ranks, granule);
    FixedShape s = split(total, ranks - 1, granule);
    s.ranks = ranks;
    s.empty = empty;
    return s;
  }

  PURLIN_HD constexpr std::size_t offset(int k) const {
    return detail::min_of(static_cast<std::size_t>(place(k)) * stride, total);
  }
  PURLIN_HD constexpr std::size_t size(int k) const {
    if (k == empty) return 0;
    return detail::min_of(static_cast<std::size_t>(place(k) + 1) * stride, total) - offset(k);
  }
  // Partition k's place in the run of nonempty-able partitions: `empty` takes no place.
  PURLIN_HD constexpr int place(int k) const { return empty >= 0 && k > empty ? k - 1 : k; }
  // Elements a buffer holding every partition must span.
  PURLIN_HD constexpr std::size_t extent() const { return total; }
  // The largest partition; it sets how many chunks a launch has (chunking.h).
  PURLIN_HD constexpr std::size_t max_size() const { return detail::min_of(stride, total); }
};

// Partitions whose sizes arrive at run time (the V collectives): plain pointers so that the same
// shape can be built on the host and passed by value to a kernel, pointing at device copies of
// the arrays. Both arrays have `ranks` entries. A null `displs` means the partitions lie back to
// back in rank order, which is what AllGatherV/ReduceScatterV callers usually mean and saves
// them materializing a prefix sum. Displacements of empty partitions are never used, as in MPI.
struct VariableShape {
  const std::size_t* counts = nullptr;
  const std::size_t* displs = nullptr;
  int ranks = 1;

  PURLIN_HD constexpr std::size_t size(int k) const { return counts[k]; }

  // O(k) without displacements; ranks are few (one NVLink domain) and this keeps the shape a
  // pair of pointers instead of a rank-sized array that kernels would have to carry.
  PURLIN_HD constexpr std::size_t offset(int k) const {
    if (displs != nullptr) return displs[k];
    std::size_t sum = 0;
    for (int i = 0; i < k; ++i) sum += counts[i];
    return sum;
  }

  PURLIN_HD constexpr std::size_t extent() const {
    std::size_t end = 0;
    std::size_t running = 0;
    for (int k = 0; k < ranks; ++k) {
      const std::size_t start = displs != nullptr ? displs[k] : running;
      if (counts[k] != 0) end = detail::max_of(end, start + counts[k]);
      running += counts[k];
    }
    return end;
  }

  PURLIN_HD constexpr std::size_t max_size() const {
    std::size_t m = 0;
    for (int k = 0; k < ranks; ++k) m = detail::max_of(m, counts[k]);
    return m;
  }
};

}  // namespace purlin::layout
