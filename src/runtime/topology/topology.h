// Host topology through hwloc: which CPUs and NUMA node sit nearest each GPU.
//
// A thread that drives a GPU (launches, polls flags in host memory, serves bootstrap)
// should run on the CPUs of the socket the GPU hangs off: its PCIe traffic and the host
// memory it touches then stay on that socket. Binding is an optimization, never a
// requirement: when anything needed is missing (no GPU, a VM without PCI information,
// an affinity mask that excludes those CPUs) it is skipped with an INFO line.
#pragma once

#include <nccl.h>

#include <string>

namespace purlin::runtime {

// Restricts the calling thread to the CPUs near `cuda_device`: the cpuset of the GPU's
// first non-IO ancestor in hwloc's tree (its package or NUMA group), intersected with the
// thread's current affinity so that a user's or launcher's narrower binding (taskset,
// cgroups, MPI) is kept. Returns ncclInvalidArgument for a negative device,
// ncclSystemError when memory runs out, otherwise ncclSuccess, bound or not.
ncclResult_t bind_thread_near_gpu(int cuda_device);

// bind_thread_near_gpu for a scope: the previous binding comes back on destruction, which
// must happen on the same thread. NCCL binds an application thread only while it
// initializes a communicator; this keeps that contract, so threads the application
// spawns later do not inherit the GPU's CPUs.
class ScopedThreadBinding {
 public:
  explicit ScopedThreadBinding(int cuda_device);
  ~ScopedThreadBinding();
  ScopedThreadBinding(const ScopedThreadBinding&) = delete;
  ScopedThreadBinding& operator=(const ScopedThreadBinding&) = delete;

 private:
  // The binding to restore (an hwloc_bitmap_t, opaque so that this header does not pull
  // in hwloc.h); null when nothing changed.
  void* previous_ = nullptr;
};

// A human-readable report: machine, packages, NUMA nodes (cpusets, memory), core and PU
// counts, whether hwloc sees PCI devices, and every CUDA device (name, PCI bus id, SMs,
// memory, and its hwloc locality when found). Works without a GPU or a CUDA driver.
std::string describe_topology();

}  // namespace purlin::runtime
