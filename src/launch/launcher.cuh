// The device half of the bridge: the host function that launches one snac_kernel instance, and
// the builders of the tables instances.h declares. Included only by the kernel translation
// units (reduce_instances_<T>.cu, copy_instances.cu); everything else sees instances.h.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "atom/config.h"
#include "atom/types.h"
#include "launch/args.h"
#include "launch/bridge.h"
#include "launch/instances.h"
#include "snac/kernel.cuh"

namespace purlin::launch {

// The Atom configuration of a collective's kernel, measured on one H200 (perf/atom, results
// h200-20261202, 64 CTAs): copies keep the paper's point (256 threads, 8 x 16 KiB stages);
// reductions take 3 x 64 KiB stages, which gave 8 bf16 sources 52% of the HBM limit against 22%
// with 8 x 16 KiB (each source gets stage_bytes / n of a slot, so small stages starve a
// many-source reduce). 256 threads in both keeps the register budget the engine was built for.
using CopyConfig = atom::DefaultConfig;
using ReduceConfig = atom::Config<256, 3, 65536>;
template <class C>
using KernelConfig = std::conditional_t<C::reduces, ReduceConfig, CopyConfig>;

// Dynamic shared memory a kernel is allowed: enough for the largest communicator, so that the
// attribute is set once per (kernel, device) rather than per communicator size.
template <class C>
inline constexpr std::size_t kMaxSmemBytes = snac::kernel_smem_bytes<KernelConfig<C>>(kMaxRanks);

template <class C, class E, class Op>
inline constexpr auto kKernel = &snac::snac_kernel<C, E, Op, KernelConfig<C>, ShapeTables<C>>;

template <class C, class E, class Op>
Result launch_kernel(const snac::Handle& h, const snac::DeviceControl& control,
                     const snac::Policy& policy, const Call& call) {
  static_assert(sizeof(snac::Handle) + sizeof(snac::Plan) + sizeof(snac::Args<C, E>) +
                        sizeof(snac::DeviceControl) + sizeof(ShapeTables<C>) + 64 <=
                    4096,
                "kernel parameters must stay inside the classic 4 KiB block");
  Prepared<C, E> p;
  if (h.ranks == 1 && kOneRankIsCopy<Op>) {
    if (Result r = make_args<C, E, Op>(call, h, policy, p.tables, p.args); !r.ok()) return r;
    LocalCopy copy;
    if (Result r = local_copy(p.args, copy); !r.ok() || copy.bytes == 0) return r;
    const cudaError_t e =
        cudaMemcpyAsync(copy.dst, copy.src, copy.bytes, cudaMemcpyDeviceToDevice, call.stream);
    return {snac::Status::ok, e, e == cudaSuccess ? "" : "one-rank copy", false};
  }
  if (Result r = prepare<C, E, Op>(h, policy, call, p); !r.ok()) return r;

  // The shared-memory attribute was set by load_kernels when the communicator was created.
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(p.plan.workers()));
  config.blockDim = dim3(static_cast<unsigned>(KernelConfig<C>::threads));
  config.dynamicSmemBytes = snac::kernel_smem_bytes<KernelConfig<C>>(h.ranks);
  config.stream = call.stream;
  const cudaError_t e =
      cudaLaunchKernelEx(&config, kKernel<C, E, Op>, h, p.plan, p.args, control, p.tables);
  return {snac::Status::ok, e, e == cudaSuccess ? "" : "kernel launch", e == cudaSuccess};
}

template <class C, class E, class Op>
Kernel kernel_entry() {
  return {&launch_kernel<C, E, Op>,
          &planned_workers<C, E, Op>,
          reinterpret_cast<const void*>(kKernel<C, E, Op>),
          static_cast<int>(kMaxSmemBytes<C>),
          collective_of<C>(),
          static_cast<int>(sizeof(E)),
          C::reduces ? index_of<Op>(atom::ReduceOps{}) : -1};
}

template <int Type, std::size_t... I>
ReduceKernels make_reduce_kernels(std::index_sequence<I...>) {
  using E = TypeAtT<Type, atom::ElementTypes>;
  ReduceKernels t{};
  ((t.at[I / kReduceOps][I % kReduceOps] =
        kernel_entry<TypeAtT<static_cast<int>(I / kReduceOps), ReduceCollectives>, E,
                     TypeAtT<static_cast<int>(I % kReduceOps), atom::ReduceOps>>()),
   ...);
  return t;
}

template <int Type>
const ReduceKernels& reduce_kernels() {
  static const ReduceKernels table =
      make_reduce_kernels<Type>(std::make_index_sequence<kReduceCollectives * kReduceOps>{});
  return table;
}

template <std::size_t... I>
CopyKernels make_copy_kernels(std::index_sequence<I...>) {
  // The op is irrelevant to a copy; Sum fills the template slot.
  return {{kernel_entry<TypeAtT<static_cast<int>(I), CopyCollectives>, CopyElement,
                        atom::op::Sum>()...}};
}

}  // namespace purlin::launch
