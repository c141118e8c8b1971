// The point-to-point kernels (launch/pairs.h): the copy family's Atom configuration, since a
// transfer only copies.
#include <cstdint>

#include "launch/instances.h"
#include "launch/pairs.h"
#include "snac/pair_kernel.cuh"
#include "snac/pair_launch.h"

namespace purlin::launch {
namespace {

template <int N>
inline constexpr auto kPairKernel = &snac::pair_kernel<CopyConfig, N>;

template <int N>
Result launch_with(const snac::PairHandle& h, snac::DeviceControl control, const KernelSmem& smem, int max_workers,
                   const snac::PairOp* ops, int count, cudaStream_t stream) {
  snac::PairLaunch<N> launch;
  const char* what = "";
  if (const snac::Status s = snac::make_pair_launch(h, ops, count, max_workers, launch, &what);
      s != snac::Status::ok) {
    return {s, cudaSuccess, what, false};
  }
  std::uint64_t bytes = 0;
  bool only_copies = true;
  for (int i = 0; i < launch.count; ++i) {
    bytes += launch.ops[i].bytes;
    only_copies &= launch.ops[i].direction == snac::PairDirection::copy;
  }
  if (bytes == 0) return {};
  // A group that only sends to and receives from this rank (every group of a one-rank
  // communicator) is device copies at copy speed, as NCCL answers it; nothing of the
  // communicator is touched.
  if (only_copies) {
    for (int i = 0; i < launch.count; ++i) {
      const snac::PairOp& o = launch.ops[i];
      if (o.bytes == 0) continue;
      if (const cudaError_t e = cudaMemcpyAsync(o.dst, o.src, o.bytes, cudaMemcpyDeviceToDevice, stream);
          e != cudaSuccess) {
        return {snac::Status::ok, e, "self copy", false};
      }
    }
    return {};
  }
  // A pair launch's CTAs do not record their start: the words are the collectives' epochs.
  control.started = nullptr;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(launch.workers));
  config.blockDim = dim3(static_cast<unsigned>(CopyConfig::threads));
  config.dynamicSmemBytes = snac::kernel_smem_bytes(smem.copy.workspace_bytes, h.ranks);
  config.stream = stream;
  const cudaError_t e = cudaLaunchKernelEx(&config, kPairKernel<N>, h, launch, control);
  return {snac::Status::ok, e, e == cudaSuccess ? "" : "kernel launch", e == cudaSuccess};
}

}  // namespace

Result launch_pairs(const snac::PairHandle& h, const snac::DeviceControl& control, const KernelSmem& smem,
                    int max_workers, const snac::PairOp* ops, int count, cudaStream_t stream) {
  if (h.chunk_bytes == 0 || h.slots == 0 || h.sequences == nullptr) {
    return {snac::Status::bad_policy, cudaSuccess, "the communicator has no point-to-point memory", false};
  }
  if (max_workers < 1 || max_workers > h.sequence_slots) {
    return {snac::Status::too_many_workers, cudaSuccess, "point-to-point workers", false};
  }
  if (count <= snac::kSmallPairOps) return launch_with<snac::kSmallPairOps>(h, control, smem, max_workers, ops, count, stream);
  return launch_with<snac::kMaxPairOps>(h, control, smem, max_workers, ops, count, stream);
}

PairKernelFunctions pair_kernel_functions() {
  return {reinterpret_cast<const void*>(kPairKernel<snac::kSmallPairOps>),
          reinterpret_cast<const void*>(kPairKernel<snac::kMaxPairOps>),
          static_cast<int>(snac::kernel_smem_bytes(CopyConfig::workspace_bytes, kMaxRanks))};
}

}  // namespace purlin::launch
