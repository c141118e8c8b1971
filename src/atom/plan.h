// The arithmetic that cuts a call into scalar head, 16-byte vector body and scalar tail, and the
// body into pipeline chunks. Plain constexpr functions, host-tested, used verbatim by the GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace purlin::atom {

// [0, head) and [head + body, bytes) go element by element; [head, head + body) in 16-byte packs
// aligned on the destination. Vectorizing on the destination means every store is a full aligned
// 16-byte store; sources are realigned on the way in (see SourceView).
struct Split {
  std::size_t head;
  std::size_t body;
};

__host__ __device__ constexpr Split split(std::uintptr_t dst, std::size_t bytes, std::size_t elem) {
  if (dst % elem != 0) {
    // A destination that is not even element-aligned has no element boundary on a 16-byte
    // boundary: the whole call takes the element path (correct, slow, and rare in practice).
    return {bytes, 0};
  }
  const std::size_t to_aligned = (16 - dst % 16) % 16;
  const std::size_t head = to_aligned < bytes ? to_aligned : bytes;
  return {head, (bytes - head) & ~std::size_t{15}};
}

// The 16-byte vector body of one call: `bytes` (a multiple of 16) written at `dst` (16-byte aligned),
// which is byte `offset` of a call of `total` bytes.
struct BodyRange {
  std::uintptr_t dst;
  std::size_t offset;
  std::size_t bytes;
  std::size_t total;
};

// One source as seen by the body: the body's bytes start `shift` bytes into the aligned block at
// `first`; only bytes of [lo, hi) (the source's range in this call) may be read.
struct SourceView {
  std::uintptr_t first;
  unsigned shift;
  std::uintptr_t lo;
  std::uintptr_t hi;
};

__host__ __device__ constexpr SourceView source_view(std::uintptr_t base, std::size_t offset,
                                                     std::size_t call_bytes) {
  const std::uintptr_t a = base + offset;
  return {a & ~std::uintptr_t{15}, static_cast<unsigned>(a & 15), base, base + call_bytes};
}

__host__ __device__ constexpr bool block_in_range(std::uintptr_t g, const SourceView& v) {
  return g >= v.lo && g + 16 <= v.hi;
}

// Aligned 16-byte blocks that cover `len` bytes starting `shift` bytes into a block.
__host__ __device__ constexpr unsigned window_blocks(unsigned shift, std::size_t len) {
  return static_cast<unsigned>((shift + len + 15) / 16);
}

// The pipeline's shared-memory use for n sources: each stage of `stage_bytes` holds one window per
// source at `stride` intervals. A window is the chunk plus, when any source is misaligned relative
// to the destination, one extra block for the realignment spill-over. chunks == 0: unusable (the
// caller takes the register path).
struct ChunkPlan {
  std::uint32_t stride;
  std::uint32_t chunk;
  std::size_t chunks;
};

__host__ __device__ constexpr ChunkPlan chunk_plan(std::size_t body, int n, std::uint32_t stage_bytes,
                                                   bool any_misaligned) {
  const std::uint32_t stride = (stage_bytes / static_cast<std::uint32_t>(n)) & ~std::uint32_t{15};
  const std::uint32_t slack = any_misaligned ? 16u : 0u;
  if (stride < slack + 16) return {stride, 0, 0};
  const std::uint32_t chunk = stride - slack;
  return {stride, chunk, (body + chunk - 1) / chunk};
}

// A contiguous share of `bytes` for part `index` of `parts`, cut on `grain` boundaries. With a grain
// that is a multiple of 16 every part keeps the caller's alignment mod 16 and element boundaries.
struct Slice {
  std::size_t begin;
  std::size_t end;
};

__host__ __device__ constexpr Slice slice(std::size_t bytes, unsigned parts, unsigned index,
                                          std::size_t grain = 16) {
  const std::size_t units = (bytes + grain - 1) / grain;
  const std::size_t per = units / parts;
  const std::size_t extra = units % parts;
  const std::size_t b = index * per + (index < extra ? index : extra);
  const std::size_t e = b + per + (index < extra ? 1 : 0);
  const std::size_t lo = b * grain < bytes ? b * grain : bytes;
  const std::size_t hi = e * grain < bytes ? e * grain : bytes;
  return {lo, hi};
}

}  // namespace purlin::atom
