// The hwloc side of runtime/topology: the process's topology and the steps that
// bind_thread_near_gpu and describe_topology share. Internal to the topology target
// (and its test); the rest of Purlin includes topology.h.
#pragma once

#include <hwloc.h>

#include <memory>
#include <string>

namespace purlin::runtime {

struct BitmapFree {
  void operator()(hwloc_bitmap_t b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapFree>;

// The process's topology, PCI devices included, loaded on first use (thread-safe) and
// never destroyed, because threads may still query it while the process exits. nullptr
// when hwloc cannot load one. After the load Purlin only reads it, which hwloc allows
// from any number of threads at once.
hwloc_topology_t process_topology();

// A cpuset or nodeset in list form: "0-47,96-143".
std::string bitmap_list(hwloc_const_bitmap_t set);

// "Package L#0", "Group0 L#1", "Machine L#0".
std::string object_name(hwloc_obj_t obj);

// The CUDA device's PCI bus id ("0000:19:00.0"), or "" with `why` set when the CUDA
// runtime cannot tell (no driver, no such device). Leaves no pending CUDA error.
std::string cuda_pci_bus_id(int cuda_device, std::string* why);

// The object whose cpuset is the GPU's local CPUs: the first non-IO ancestor of the PCI
// device `bus_id` (a package or NUMA group). nullptr when hwloc has no such PCI device,
// as in a VM or container without PCI information.
hwloc_obj_t gpu_local_ancestor(hwloc_topology_t topo, const std::string& bus_id);

enum class BindOutcome {
  kBound,      // the thread now runs on current & local
  kUnchanged,  // the thread already ran within `local`
  kSkipped,    // current & local is empty, or the binding could not be read
  kFailed,     // the OS refused the new binding (logged as a warning)
  kNoMemory,
};

// Restricts the calling thread to (its current CPU binding & `local`). On kBound, copies
// the binding it replaced into `previous` when that is not null. `what` names the GPU in
// the INFO line.
BindOutcome bind_thread_within(hwloc_topology_t topo, hwloc_const_cpuset_t local,
                               hwloc_bitmap_t previous, const std::string& what);

}  // namespace purlin::runtime
