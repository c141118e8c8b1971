#include "runtime/topology/hwloc_topology.h"

#include <cuda_runtime_api.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/log.h"

namespace purlin::runtime {
namespace {

// hwloc's GPU plugins (CUDA, NVML, OpenCL, ROCm SMI, Level Zero, GL) would initialize
// those runtimes inside the application's process, from inside an NCCL call. GPUs are
// matched by PCI bus id instead, which needs only the PCI tree.
constexpr const char* kSkippedComponents[] = {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"};

hwloc_topology_t load_topology() {
  // A library built against one hwloc ABI and run with another reads garbage.
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
    PURLIN_INFO(kGraph, "hwloc runtime API 0x%x does not match the 0x%x Purlin was built with; "
                "no topology", hwloc_get_api_version(), static_cast<unsigned>(HWLOC_API_VERSION));
    return nullptr;
  }
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) {
    PURLIN_INFO(kGraph, "hwloc_topology_init failed (%s); no topology", std::strerror(errno));
    return nullptr;
  }
  // Keep PCI devices and the bridges above them: a GPU's locality is the CPU-side object
  // its bridge hangs off. KEEP_IMPORTANT drops uninteresting devices and empty bridges.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  for (const char* name : kSkippedComponents) {
    // Best effort: a component this hwloc does not have is nothing to skip.
    (void)hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
  }
  if (hwloc_topology_load(topo) != 0) {
    PURLIN_INFO(kGraph, "hwloc_topology_load failed (%s); no topology", std::strerror(errno));
    hwloc_topology_destroy(topo);
    return nullptr;
  }
  PURLIN_INFO(kGraph, "hwloc %s: %d PUs, %d NUMA nodes, %d PCI devices", HWLOC_VERSION,
              hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU),
              hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE),
              hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE));
  return topo;
}

}  // namespace

hwloc_topology_t process_topology() {
  static const hwloc_topology_t topo = load_topology();
  return topo;
}

std::string bitmap_list(hwloc_const_bitmap_t set) {
  if (set == nullptr) return "none";
  int n = hwloc_bitmap_list_snprintf(nullptr, 0, set);
  if (n <= 0) return "none";
  std::vector<char> buf(static_cast<size_t>(n) + 1);
  hwloc_bitmap_list_snprintf(buf.data(), buf.size(), set);
  return std::string(buf.data());
}

std::string object_name(hwloc_obj_t obj) {
  char type[64];
  hwloc_obj_type_snprintf(type, sizeof(type), obj, 0);
  return std::string(type) + " L#" + std::to_string(obj->logical_index);
}

std::string cuda_pci_bus_id(int cuda_device, std::string* why) {
  // 13 bytes suffice for "0000:19:00.0"; leave room for a wider domain field.
  char bus_id[32] = {};
  cudaError_t err = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();  // do not leave the application a stale error to find
    *why = cudaGetErrorString(err);
    return "";
  }
  return bus_id;
}

hwloc_obj_t gpu_local_ancestor(hwloc_topology_t topo, const std::string& bus_id) {
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo, bus_id.c_str());
  if (pci == nullptr) return nullptr;
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topo, pci);
  if (ancestor == nullptr || ancestor->cpuset == nullptr) return nullptr;
  return ancestor;
}

BindOutcome bind_thread_within(hwloc_topology_t topo, hwloc_const_cpuset_t local,
                               hwloc_bitmap_t previous, const std::string& what) {
  Bitmap current(hwloc_bitmap_alloc());
  Bitmap target(hwloc_bitmap_alloc());
  if (!current || !target) return BindOutcome::kNoMemory;
  if (hwloc_get_cpubind(topo, current.get(), HWLOC_CPUBIND_THREAD) != 0) {
    PURLIN_INFO(kInit, "%s: cannot read this thread's CPU binding (%s); not binding", what.c_str(),
                std::strerror(errno));
    return BindOutcome::kSkipped;
  }
  hwloc_bitmap_and(target.get(), current.get(), local);
  if (hwloc_bitmap_iszero(target.get())) {
    // The thread was placed away from the GPU on purpose (or by a cgroup); respect it.
    PURLIN_INFO(kInit, "%s: thread affinity %s excludes the GPU's local CPUs %s; keeping it",
                what.c_str(), bitmap_list(current.get()).c_str(), bitmap_list(local).c_str());
    return BindOutcome::kSkipped;
  }
  if (hwloc_bitmap_isequal(target.get(), current.get())) {
    PURLIN_INFO(kInit, "%s: thread already runs within its local CPUs (%s)", what.c_str(),
                bitmap_list(current.get()).c_str());
    return BindOutcome::kUnchanged;
  }
  if (hwloc_set_cpubind(topo, target.get(), HWLOC_CPUBIND_THREAD) != 0) {
    PURLIN_WARN("%s: binding this thread to CPUs %s failed (%s); continuing unbound",
                what.c_str(), bitmap_list(target.get()).c_str(), std::strerror(errno));
    return BindOutcome::kFailed;
  }
  if (previous != nullptr) hwloc_bitmap_copy(previous, current.get());
  PURLIN_INFO(kInit, "%s: bound this thread to CPUs %s (was %s)", what.c_str(),
              bitmap_list(target.get()).c_str(), bitmap_list(current.get()).c_str());
  return BindOutcome::kBound;
}

}  // namespace purlin::runtime
