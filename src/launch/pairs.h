// The bridge for point-to-point (snac/pairs.h): one rank's grouped sends and receives on one
// communicator become one PairLaunch and the launch of one precompiled pair_kernel. Two
// instances, by how many transfers the launch's parameters hold: a small block for the common
// group (a few peers) and snac::kMaxPairOps for the largest.
#pragma once

#include <cuda_runtime.h>

#include "launch/bridge.h"
#include "launch/kernel_smem.h"
#include "snac/handle.h"
#include "snac/pairs.h"

namespace purlin::launch {

// Enqueues `ops` (this rank's transfers, in the order the application issued them) on `stream`
// with at most `max_workers` CTAs. A zero-byte group launches nothing. Safe inside CUDA graph
// capture: the launch reads and advances its pairs' sequence numbers on the device.
Result launch_pairs(const snac::PairHandle& handle, const snac::DeviceControl& control, const KernelSmem& smem,
                    int max_workers, const snac::PairOp* ops, int count, cudaStream_t stream);

// The pair kernels' functions (host stubs) and the dynamic shared memory they can use, for
// load_kernels.
struct PairKernelFunctions {
  const void* small = nullptr;
  const void* large = nullptr;
  int max_smem_bytes = 0;
};
PairKernelFunctions pair_kernel_functions();

}  // namespace purlin::launch
