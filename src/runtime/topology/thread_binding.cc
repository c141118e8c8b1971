// bind_thread_near_gpu and ScopedThreadBinding: the GPU's PCI bus id from CUDA, its
// locality from hwloc, then the calling thread's binding narrowed to it.
#include <cerrno>
#include <cstring>
#include <string>

#include "base/log.h"
#include "runtime/topology/hwloc_topology.h"
#include "runtime/topology/topology.h"

namespace purlin::runtime {
namespace {

ncclResult_t bind_near(int cuda_device, hwloc_bitmap_t previous) {
  if (cuda_device < 0) {
    PURLIN_WARN("bind_thread_near_gpu: invalid CUDA device %d", cuda_device);
    return ncclInvalidArgument;
  }
  std::string why;
  const std::string bus_id = cuda_pci_bus_id(cuda_device, &why);
  if (bus_id.empty()) {
    PURLIN_INFO(kInit, "CUDA device %d: no PCI bus id (%s); not binding this thread", cuda_device,
                why.c_str());
    return ncclSuccess;
  }
  hwloc_topology_t topo = process_topology();
  if (topo == nullptr) {
    PURLIN_INFO(kInit, "CUDA device %d (PCI %s): no hwloc topology; not binding this thread",
                cuda_device, bus_id.c_str());
    return ncclSuccess;
  }
  hwloc_obj_t local = gpu_local_ancestor(topo, bus_id);
  if (local == nullptr) {
    PURLIN_INFO(kInit, "CUDA device %d: hwloc knows no PCI device %s (no PCI information, e.g. in "
                "a VM); not binding this thread", cuda_device, bus_id.c_str());
    return ncclSuccess;
  }
  const std::string what = "CUDA device " + std::to_string(cuda_device) + " (PCI " + bus_id +
                           ", near " + object_name(local) + ")";
  return bind_thread_within(topo, local->cpuset, previous, what) == BindOutcome::kNoMemory
             ? ncclSystemError
             : ncclSuccess;
}

}  // namespace

ncclResult_t bind_thread_near_gpu(int cuda_device) { return bind_near(cuda_device, nullptr); }

ScopedThreadBinding::ScopedThreadBinding(int cuda_device) {
  Bitmap previous(hwloc_bitmap_alloc());
  if (!previous) return;  // could not restore later, so do not bind now
  hwloc_bitmap_zero(previous.get());
  (void)bind_near(cuda_device, previous.get());
  // A thread always runs somewhere, so a replaced binding is never empty.
  if (!hwloc_bitmap_iszero(previous.get())) previous_ = previous.release();
}

ScopedThreadBinding::~ScopedThreadBinding() {
  if (previous_ == nullptr) return;
  Bitmap previous(static_cast<hwloc_bitmap_t>(previous_));
  // Non-null: a binding was replaced, which needed the topology.
  hwloc_topology_t topo = process_topology();
  if (hwloc_set_cpubind(topo, previous.get(), HWLOC_CPUBIND_THREAD) != 0) {
    PURLIN_WARN("restoring this thread's CPU binding %s failed (%s)",
                bitmap_list(previous.get()).c_str(), std::strerror(errno));
    return;
  }
  PURLIN_INFO(kInit, "restored this thread's CPU binding to %s", bitmap_list(previous.get()).c_str());
}

}  // namespace purlin::runtime
