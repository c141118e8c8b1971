// Device instantiations of the SNAC engine. For now two, so that the engine's device path is
// compiled for every architecture of the build: a single-phase copy (AllGather) and a
// composition with a reduction (AllReduce, bf16 sum). The runtime's launch bridge will replace
// this with its one list of instantiations.
#include <cuda_bf16.h>

#include "layout/collectives.h"
#include "snac/kernel.cuh"

namespace purlin::snac {

using KernelConfig = atom::DefaultConfig;

template __global__ void snac_kernel<layout::AllGather, __nv_bfloat16, op::Sum, KernelConfig>(
    Handle, Plan, Args<layout::AllGather, __nv_bfloat16>, DeviceControl);

template __global__ void snac_kernel<layout::AllReduce, __nv_bfloat16, op::Sum, KernelConfig>(
    Handle, Plan, Args<layout::AllReduce, __nv_bfloat16>, DeviceControl);

}  // namespace purlin::snac
