// The one list of kernel instantiations (DESIGN §8) and the tables the bridge dispatches
// through. The list is three TypeLists:
//
//   Collectives          the declarations of layout/collectives.h, in launch::Collective order
//   atom::ElementTypes   in ncclDataType_t order
//   atom::ReduceOps      in ncclRedOp_t order, then PreMulSum
//
// A collective that reduces gets one kernel per (element type, op): 4 x 12 x 6 = 288. A
// collective that copies gets one kernel on a byte element whatever the call's type (a copy
// does not care what it moves; counts become bytes): 7. Nothing here is spelled per type, op or
// collective; the tables are built from the lists with index sequences.
//
// The reduce kernels of one element type live in one translation unit (reduce_instances.cu.in,
// configured once per type by CMake), so the 13 kernel TUs compile in parallel. This header only
// declares the per-TU tables; it is plain C++ (the bridge and the host tests include it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "atom/types.h"
#include "launch/bridge.h"
#include "launch/call.h"
#include "launch/kernel_smem.h"
#include "layout/collectives.h"

namespace purlin::launch {

using atom::TypeAtT;
using atom::TypeList;

// In launch::Collective order (checked below).
using Collectives =
    TypeList<layout::AllGather, layout::AllGatherV, layout::ReduceScatter, layout::ReduceScatterV,
             layout::AllToAll, layout::AllToAllV, layout::Scatter, layout::Gather,
             layout::AllReduce, layout::Broadcast, layout::Reduce>;

// Copies run on this element; their counts are converted to bytes.
using CopyElement = std::uint8_t;

// ---- List arithmetic ---------------------------------------------------------------------

template <class T, class... Ts>
constexpr int index_of(TypeList<Ts...>) {
  int i = 0;
  const bool found = ((std::is_same_v<T, Ts> ? true : (++i, false)) || ...);
  return found ? i : -1;
}

template <class T, class List>
struct Prepend;
template <class T, class... Ts>
struct Prepend<T, TypeList<Ts...>> {
  using type = TypeList<T, Ts...>;
};

template <template <class> class Pred, class List>
struct Filter;
template <template <class> class Pred>
struct Filter<Pred, TypeList<>> {
  using type = TypeList<>;
};
template <template <class> class Pred, class T, class... Ts>
struct Filter<Pred, TypeList<T, Ts...>> {
  using rest = typename Filter<Pred, TypeList<Ts...>>::type;
  using type = std::conditional_t<Pred<T>::value, typename Prepend<T, rest>::type, rest>;
};

template <class C>
struct Reduces : std::bool_constant<C::reduces> {};
template <class C>
struct Copies : std::bool_constant<!C::reduces> {};

using ReduceCollectives = typename Filter<Reduces, Collectives>::type;
using CopyCollectives = typename Filter<Copies, Collectives>::type;
inline constexpr int kReduceCollectives = ReduceCollectives::size;
inline constexpr int kCopyCollectives = CopyCollectives::size;

// ---- The list agrees with the runtime enums ----------------------------------------------

template <Collective K>
using CollectiveType = TypeAtT<static_cast<int>(K), Collectives>;

static_assert(Collectives::size == kCollectives);
static_assert(atom::ElementTypes::size == kElementTypes);
static_assert(atom::ReduceOps::size == kReduceOps);
static_assert(index_of<atom::op::PreMulSum>(atom::ReduceOps{}) == kPreMulSum);
static_assert(
    std::is_same_v<CollectiveType<Collective::all_gather>, layout::AllGather> &&
        std::is_same_v<CollectiveType<Collective::all_gather_v>, layout::AllGatherV> &&
        std::is_same_v<CollectiveType<Collective::reduce_scatter>, layout::ReduceScatter> &&
        std::is_same_v<CollectiveType<Collective::reduce_scatter_v>, layout::ReduceScatterV> &&
        std::is_same_v<CollectiveType<Collective::all_to_all>, layout::AllToAll> &&
        std::is_same_v<CollectiveType<Collective::all_to_all_v>, layout::AllToAllV> &&
        std::is_same_v<CollectiveType<Collective::scatter>, layout::Scatter> &&
        std::is_same_v<CollectiveType<Collective::gather>, layout::Gather> &&
        std::is_same_v<CollectiveType<Collective::all_reduce>, layout::AllReduce> &&
        std::is_same_v<CollectiveType<Collective::broadcast>, layout::Broadcast> &&
        std::is_same_v<CollectiveType<Collective::reduce>, layout::Reduce>,
    "Collectives must list layout/collectives.h in launch::Collective order");
static_assert(kReduceCollectives == 4 && kCopyCollectives == 7);

template <std::size_t... I>
constexpr std::array<bool, sizeof...(I)> reduces_by_index(std::index_sequence<I...>) {
  return {TypeAtT<static_cast<int>(I), Collectives>::reduces...};
}
inline constexpr std::array<bool, kCollectives> kReduces =
    reduces_by_index(std::make_index_sequence<kCollectives>{});

constexpr bool reduces(Collective c) { return kReduces[static_cast<std::size_t>(c)]; }

// Position of `c` within its group (ReduceCollectives or CopyCollectives): the row of its
// table.
constexpr int group_index(Collective c) {
  const auto at = static_cast<std::size_t>(c);
  int i = 0;
  for (std::size_t k = 0; k < at; ++k) i += kReduces[k] == kReduces[at] ? 1 : 0;
  return i;
}

template <class C>
constexpr Collective collective_of() {
  constexpr int i = index_of<C>(Collectives{});
  static_assert(i >= 0, "collective_of: not in the list");
  return static_cast<Collective>(i);
}

// ---- Tables -------------------------------------------------------------------------------

using LaunchFn = Result (*)(const snac::Handle&, const snac::DeviceControl&, const snac::Policy&,
                            const KernelSmem&, const Call&);
using WorkersFn = int (*)(const snac::Handle&, const snac::Policy&, const Call&);

// One precompiled kernel and the host code that plans and launches it. The descriptive fields
// say which instance it is, so that the tables can be checked without a GPU.
struct Kernel {
  LaunchFn launch = nullptr;
  WorkersFn workers = nullptr;
  const void* function = nullptr;  // the __global__ function (its host stub's address)
  int max_smem_bytes = 0;          // dynamic shared memory it can use (largest communicator)
  Collective collective = Collective::all_reduce;
  int element_bytes = 0;  // of the kernel's element: 1 for every copy
  int op = -1;            // atom::ReduceOps index; -1 for copies
};

struct ReduceKernels {
  Kernel at[kReduceCollectives][kReduceOps];  // [group_index(collective)][op]
};
struct CopyKernels {
  Kernel at[kCopyCollectives];  // [group_index(collective)]
};

// Defined in the configured reduce_instances_<Type>.cu (one explicit instantiation each).
template <int Type>
const ReduceKernels& reduce_kernels();
// Defined in copy_instances.cu.
const CopyKernels& copy_kernels();

// The kernel that runs (collective, ncclDataType_t type, op); nullptr when an index is out of
// range. Copies ignore `op` and share one kernel across types.
const Kernel* find_kernel(Collective collective, int type, int op);

}  // namespace purlin::launch
