// Chunking: how a partition is cut into the units SNAC stages, notifies and consumes.
//
// A chunk is a whole number of elements, so a reduction never sees half an element and a
// chunk's bytes can be handed to Atom::reduce as typed elements. Chunk c of a partition of
// `bytes` bytes is [c * stride, min(bytes, (c + 1) * stride)); the last chunk is short, never
// dropped. A partition whose byte size is not a multiple of the element size (a caller error)
// still loses nothing: its partial element rides in the last chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/host_device.h"
#include "layout/region.h"

namespace purlin::layout {

struct Chunking {
  std::size_t stride = 1;  // bytes per full chunk: a multiple of the element size, >= one element

  // `chunk_bytes` is the policy's chunk size; it is rounded down to whole elements and raised to
  // one element, so a policy value smaller than an element (or 0) still makes progress.
  PURLIN_HD static constexpr Chunking make(std::size_t chunk_bytes, std::size_t elem_bytes) {
    const std::size_t elem = elem_bytes == 0 ? 1 : elem_bytes;
    const std::size_t whole = chunk_bytes - chunk_bytes % elem;
    return {whole < elem ? elem : whole};
  }

  // Chunks in a partition of `bytes` bytes; 0 for an empty partition.
  PURLIN_HD constexpr std::uint64_t count(std::size_t bytes) const {
    return detail::ceil_div(bytes, stride);
  }

  // Chunk c of a partition of `bytes` bytes, relative to the partition start. c >= count(bytes)
  // yields the empty region at the end, so that a CTA handed a surplus ordinal does nothing.
  PURLIN_HD constexpr Region range(std::size_t bytes, std::uint64_t c) const {
    if (c == 0 && bytes <= stride) return {0, bytes};  // the whole partition, no division
    if (c >= count(bytes)) return {bytes, 0};
    const std::size_t begin = static_cast<std::size_t>(c) * stride;
    return {begin, detail::min_of(stride, bytes - begin)};
  }

  // Chunk c of a partition given as an absolute byte region of a buffer.
  PURLIN_HD constexpr Region range(Region partition_bytes, std::uint64_t c) const {
    const Region r = range(partition_bytes.size, c);
    return {partition_bytes.offset + r.offset, r.size};
  }
};

PURLIN_HD constexpr std::uint64_t chunk_count(std::size_t bytes, std::size_t chunk_bytes,
                                              std::size_t elem_bytes) {
  return Chunking::make(chunk_bytes, elem_bytes).count(bytes);
}

PURLIN_HD constexpr Region chunk_range(std::size_t bytes, std::size_t chunk_bytes,
                                       std::size_t elem_bytes, std::uint64_t c) {
  return Chunking::make(chunk_bytes, elem_bytes).range(bytes, c);
}

// Chunk ordinals of one launch: those of the largest partition (DESIGN §2: for V collectives
// the chunk count that advances the epoch is the maximum over ranks). Every rank must advance
// its epochs identically, so the shape must be the same on every rank: true for AllGatherV and
// ReduceScatterV (one counts array for all), not for AllToAllV, whose per-rank send and receive
// counts differ; there the caller passes a shape whose max_size() is agreed across ranks (the
// maximum of the full count matrix).
template <class Shape>
PURLIN_HD constexpr std::uint64_t launch_chunks(const Shape& shape, std::size_t elem_bytes,
                                                Chunking chunking) {
  return chunking.count(shape.max_size() * elem_bytes);
}

}  // namespace purlin::layout
