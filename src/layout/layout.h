// Layouts: how one rank's buffer is split into rank-indexed partitions (DESIGN §1).
//
//   packed      the buffer is this rank's own partition, nothing else
//   scattered   n partitions; partition k belongs to rank k
//   transposed  n partitions; partition k of rank r is the block rank k addressed to rank r
//               (partition r of rank k's scattered input)
//
// A layout is a type so that collectives can be declared, composed and checked at compile time;
// its arithmetic is static and constexpr. The V forms have the same relationships with sizes
// taken from a VariableShape at run time. Scattered and transposed share their geometry; they
// differ in which global block region k carries, which is what Collective::source encodes.
#pragma once

#include <cstdint>
#include <type_traits>

#include "layout/host_device.h"
#include "layout/region.h"

namespace purlin::layout {

enum class LayoutKind : std::uint8_t { packed, scattered, transposed };

template <LayoutKind K, bool IsVariable>
struct Layout {
  static constexpr LayoutKind kind = K;
  static constexpr bool variable = IsVariable;
  using Shape = std::conditional_t<IsVariable, VariableShape, FixedShape>;

  // Whether `rank`'s buffer has a region for partition k.
  PURLIN_HD static constexpr bool holds(int rank, int k) {
    return K != LayoutKind::packed || k == rank;
  }

  // Number of partitions one buffer holds.
  PURLIN_HD static constexpr int regions(int ranks) {
    return K == LayoutKind::packed ? 1 : ranks;
  }

  // Partition k of `rank`'s buffer, in elements. A packed buffer starts at its own partition,
  // so its region is {0, size(rank)}; partitions it does not hold are empty.
  PURLIN_HD static constexpr Region region(const Shape& shape, int rank, int k) {
    if constexpr (K == LayoutKind::packed) {
      return holds(rank, k) ? Region{0, shape.size(rank)} : Region{};
    } else {
      return Region{shape.offset(k), shape.size(k)};
    }
  }

  // Elements `rank`'s buffer must span (NCCL's sendcount/recvcount for the buffer).
  PURLIN_HD static constexpr std::size_t extent(const Shape& shape, int rank) {
    if constexpr (K == LayoutKind::packed) {
      return shape.size(rank);
    } else {
      return shape.extent();
    }
  }
};

using Packed = Layout<LayoutKind::packed, false>;
using Scattered = Layout<LayoutKind::scattered, false>;
using Transposed = Layout<LayoutKind::transposed, false>;
using PackedV = Layout<LayoutKind::packed, true>;
using ScatteredV = Layout<LayoutKind::scattered, true>;
using TransposedV = Layout<LayoutKind::transposed, true>;

template <class L>
inline constexpr bool is_layout_v = false;
template <LayoutKind K, bool V>
inline constexpr bool is_layout_v<Layout<K, V>> = true;

}  // namespace purlin::layout
