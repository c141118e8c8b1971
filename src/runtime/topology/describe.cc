// describe_topology: what hwloc and the CUDA runtime see, as text for people.
#include <cuda_runtime_api.h>

#include <cstdarg>
#include <cstdio>
#include <string>

#include "runtime/topology/hwloc_topology.h"
#include "runtime/topology/topology.h"

namespace purlin::runtime {
namespace {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out.resize(at + static_cast<size_t>(n));  // drop the terminator vsnprintf wrote
  }
  va_end(again);
}

double gib(unsigned long long bytes) { return static_cast<double>(bytes) / (1ull << 30); }

const char* info_or(hwloc_obj_t obj, const char* name, const char* fallback) {
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

void describe_host(hwloc_topology_t topo, std::string& out) {
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  appendf(out, "host: %s, %s %s (%s), product: %s / %s\n", info_or(root, "HostName", "?"),
          info_or(root, "OSName", "?"), info_or(root, "OSRelease", "?"),
          info_or(root, "Architecture", "?"), info_or(root, "DMISysVendor", "?"),
          info_or(root, "DMIProductName", "?"));
  appendf(out, "  packages: %d, NUMA nodes: %d, cores: %d, PUs: %d, memory: %.1f GiB\n",
          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE),
          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE),
          hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), gib(root->total_memory));
  appendf(out, "  CPUs allowed to this process: %s\n",
          bitmap_list(hwloc_topology_get_allowed_cpuset(topo)).c_str());
  Bitmap bound(hwloc_bitmap_alloc());
  if (bound && hwloc_get_cpubind(topo, bound.get(), HWLOC_CPUBIND_PROCESS) == 0) {
    appendf(out, "  process CPU binding: %s\n", bitmap_list(bound.get()).c_str());
  }
  for (hwloc_obj_t p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, nullptr); p != nullptr;
       p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p)) {
    appendf(out, "  package L#%u (P#%u): %s, CPUs %s\n", p->logical_index, p->os_index,
            info_or(p, "CPUModel", "unknown CPU"), bitmap_list(p->cpuset).c_str());
  }
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr); n != nullptr;
       n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)) {
    appendf(out, "  NUMA node L#%u (P#%u): CPUs %s, memory %.1f GiB\n", n->logical_index,
            n->os_index, bitmap_list(n->cpuset).c_str(), gib(n->attr->numanode.local_memory));
  }
  int pci = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE);
  if (pci > 0) {
    appendf(out, "  PCI: hwloc found %d PCI devices\n", pci);
  } else {
    out += "  PCI: hwloc found no PCI devices (e.g. a VM or container); GPU locality unknown\n";
  }
}

void describe_locality(hwloc_topology_t topo, const std::string& bus_id, std::string& out) {
  if (topo == nullptr || bus_id.empty()) {
    out += "    locality: unknown\n";
    return;
  }
  hwloc_obj_t local = gpu_local_ancestor(topo, bus_id);
  if (local == nullptr) {
    out += "    locality: unknown (hwloc has no PCI device " + bus_id + ")\n";
    return;
  }
  appendf(out, "    locality: near %s, NUMA node(s) %s, CPUs %s\n", object_name(local).c_str(),
          bitmap_list(local->nodeset).c_str(), bitmap_list(local->cpuset).c_str());
}

void describe_gpus(hwloc_topology_t topo, std::string& out) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    appendf(out, "GPUs: no CUDA device (%s)\n",
            err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
    return;
  }
  int driver = 0;
  int runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  appendf(out, "GPUs: %d CUDA device%s (driver %d.%d, runtime %d.%d)\n", count,
          count == 1 ? "" : "s", driver / 1000, driver % 1000 / 10, runtime / 1000,
          runtime % 1000 / 10);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, d);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      appendf(out, "  GPU %d: properties unavailable (%s)\n", d, cudaGetErrorString(err));
      continue;
    }
    std::string why;
    const std::string bus_id = cuda_pci_bus_id(d, &why);
    appendf(out, "  GPU %d: %s, sm_%d%d, PCI %s, %d SMs, %.1f GiB\n", d, prop.name, prop.major,
            prop.minor, bus_id.empty() ? why.c_str() : bus_id.c_str(), prop.multiProcessorCount,
            gib(prop.totalGlobalMem));
    describe_locality(topo, bus_id, out);
  }
}

}  // namespace

std::string describe_topology() {
  std::string out;
  hwloc_topology_t topo = process_topology();
  appendf(out, "hwloc %s (runtime API 0x%x)\n", HWLOC_VERSION, hwloc_get_api_version());
  if (topo != nullptr) {
    describe_host(topo, out);
  } else {
    out += "host: hwloc could not load a topology\n";
  }
  describe_gpus(topo, out);
  return out;
}

}  // namespace purlin::runtime
