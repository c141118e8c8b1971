// The device half of the bridge: the host function that launches one snac_kernel instance, and
// the builders of the tables instances.h declares. Included only by the kernel translation
// units (reduce_instances_<T>.cu, copy_instances.cu); everything else sees instances.h.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "atom/types.h"
#include "launch/args.h"
#include "launch/bridge.h"
#include "launch/instances.h"
#include "launch/kernel_smem.h"
#include "snac/kernel.cuh"

namespace purlin::launch {

// Dynamic shared memory a kernel can use: the compiled workspace and the largest communicator's
// table, so that the attribute is set once per (kernel, device) rather than per communicator
// size; load_kernels lowers it to what the device allows.
template <class C>
inline constexpr std::size_t kMaxSmemBytes =
    snac::kernel_smem_bytes(KernelConfig<C>::workspace_bytes, kMaxRanks);

template <class C, class E, class Op>
inline constexpr auto kKernel = &snac::snac_kernel<C, E, Op, KernelConfig<C>, ShapeTables<C>>;

template <class C, class E, class Op>
Result launch_kernel(const snac::Handle& h, const snac::DeviceControl& control,
                     const snac::Policy& policy, const KernelSmem& smem, const Call& call) {
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

  // The shared-memory attribute was set by load_kernels when the communicator was created, and
  // `smem` chosen for its size there.
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(p.plan.workers()));
  config.blockDim = dim3(static_cast<unsigned>(KernelConfig<C>::threads));
  // A latency-regime launch moves packets only and never calls the Atom, so it takes no
  // workspace (README: shared memory).
  const std::size_t workspace =
      p.plan.regime == snac::Regime::latency ? 0 : smem.of<C>().workspace_bytes;
  config.dynamicSmemBytes = snac::kernel_smem_bytes(workspace, h.ranks);
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
