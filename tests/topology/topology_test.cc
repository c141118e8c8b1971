// runtime/topology on the CPU: the report agrees with hwloc, binding never widens or
// empties a thread's affinity, and a scoped binding comes back exactly. Each binding test
// runs in a thread of its own so the test runner's thread keeps its affinity. Affinity is
// read with sched_getaffinity, independently of the hwloc code under test.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/topology/hwloc_topology.h"
#include "runtime/topology/topology.h"

namespace purlin::runtime {
namespace {

cpu_set_t thread_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0) << std::strerror(errno);
  return set;
}

bool is_subset(const cpu_set_t& a, const cpu_set_t& b) {
  cpu_set_t both;
  CPU_AND(&both, &a, &b);
  return CPU_EQUAL(&both, &a);
}

bool have_gpu() {
  int n = 0;
  bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}

// Runs `body` on a fresh thread and waits for it; gtest assertions inside work as usual.
void on_own_thread(const std::function<void()>& body) { std::thread(body).join(); }

int count_after(const std::string& text, const std::string& key) {
  size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  int n = -1;
  return std::sscanf(text.c_str() + at + key.size(), "%d", &n) == 1 ? n : -1;
}

TEST(DescribeTopology, ReportsThePUsHwlocCounts) {
  const std::string report = describe_topology();
  ASSERT_FALSE(report.empty());
  hwloc_topology_t topo = nullptr;
  ASSERT_EQ(hwloc_topology_init(&topo), 0);
  ASSERT_EQ(hwloc_topology_load(topo), 0);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hwloc_topology_destroy(topo);
  EXPECT_GE(pus, 1);
  EXPECT_EQ(count_after(report, "PUs: "), pus) << report;
}

TEST(DescribeTopology, ReportsGpusOrTheirAbsence) {
  const std::string report = describe_topology();
  if (have_gpu()) {
    EXPECT_NE(report.find("GPU 0: "), std::string::npos) << report;
  } else {
    EXPECT_NE(report.find("no CUDA device"), std::string::npos) << report;
  }
}

TEST(DescribeTopology, ConcurrentCallersShareOneTopology) {
  std::vector<std::string> reports(8);
  std::vector<std::thread> threads;
  for (auto& r : reports) threads.emplace_back([&r] { r = describe_topology(); });
  for (auto& t : threads) t.join();
  for (const auto& r : reports) EXPECT_EQ(r, reports[0]);
  EXPECT_EQ(process_topology(), process_topology());
}

// The locality lookup bind_thread_near_gpu uses, on whatever PCI devices this host has,
// with the bus id spelled as CUDA spells it (upper-case hex).
TEST(GpuLocalAncestor, FindsTheCpuSideOfEveryPciDevice) {
  hwloc_topology_t topo = process_topology();
  ASSERT_NE(topo, nullptr);
  if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PCI_DEVICE) == 0) {
    GTEST_SKIP() << "hwloc sees no PCI devices on this host";
  }
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topo, pci)) {
    char bus_id[32];
    std::snprintf(bus_id, sizeof(bus_id), "%04X:%02X:%02X.%X", pci->attr->pcidev.domain,
                  pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    hwloc_obj_t local = gpu_local_ancestor(topo, bus_id);
    ASSERT_NE(local, nullptr) << bus_id;
    EXPECT_FALSE(hwloc_obj_type_is_io(local->type)) << bus_id;
    EXPECT_FALSE(hwloc_bitmap_iszero(local->cpuset)) << bus_id;
  }
  EXPECT_EQ(gpu_local_ancestor(topo, "ffff:ff:1f.7"), nullptr);
  EXPECT_EQ(gpu_local_ancestor(topo, "not a bus id"), nullptr);
}

TEST(BindThreadNearGpu, RejectsANegativeDevice) {
  EXPECT_EQ(bind_thread_near_gpu(-1), ncclInvalidArgument);
}

TEST(BindThreadNearGpu, DeviceZeroNarrowsAtMost) {
  const bool gpu = have_gpu();
  on_own_thread([gpu] {
    const cpu_set_t before = thread_affinity();
    EXPECT_EQ(bind_thread_near_gpu(0), ncclSuccess);
    const cpu_set_t after = thread_affinity();
    if (!gpu) {
      EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "bound without a GPU";
    } else {
      EXPECT_GT(CPU_COUNT(&after), 0);
      EXPECT_TRUE(is_subset(after, before)) << "binding widened the thread's affinity";
    }
  });
}

TEST(ScopedThreadBinding, RestoresTheBindingItReplaced) {
  on_own_thread([] {
    const cpu_set_t before = thread_affinity();
    {
      ScopedThreadBinding binding(0);
      const cpu_set_t inside = thread_affinity();
      EXPECT_TRUE(is_subset(inside, before));
    }
    const cpu_set_t after = thread_affinity();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  });
}

// The GPU-independent half of binding, with the first CPU of the thread's own set
// standing in for a GPU's local CPUs.
TEST(BindThreadWithin, NarrowsKeepsAndRespectsDisjointSets) {
  on_own_thread([] {
    hwloc_topology_t topo = process_topology();
    ASSERT_NE(topo, nullptr);
    Bitmap original(hwloc_bitmap_alloc());
    ASSERT_EQ(hwloc_get_cpubind(topo, original.get(), HWLOC_CPUBIND_THREAD), 0);
    const int first = hwloc_bitmap_first(original.get());
    ASSERT_GE(first, 0);
    Bitmap local(hwloc_bitmap_alloc());
    hwloc_bitmap_only(local.get(), static_cast<unsigned>(first));
    const bool single = hwloc_bitmap_weight(original.get()) == 1;

    Bitmap previous(hwloc_bitmap_alloc());
    hwloc_bitmap_zero(previous.get());
    EXPECT_EQ(bind_thread_within(topo, local.get(), previous.get(), "test"),
              single ? BindOutcome::kUnchanged : BindOutcome::kBound);
    cpu_set_t now = thread_affinity();
    EXPECT_EQ(CPU_COUNT(&now), 1);
    EXPECT_TRUE(CPU_ISSET(first, &now));
    if (!single) {
      EXPECT_TRUE(hwloc_bitmap_isequal(previous.get(), original.get()));
    }

    // Already inside: nothing changes.
    EXPECT_EQ(bind_thread_within(topo, local.get(), nullptr, "test"), BindOutcome::kUnchanged);

    // Local CPUs outside the thread's binding: the binding is kept, not replaced.
    Bitmap elsewhere(hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo)));
    hwloc_bitmap_clr(elsewhere.get(), static_cast<unsigned>(first));
    if (!hwloc_bitmap_iszero(elsewhere.get())) {
      EXPECT_EQ(bind_thread_within(topo, elsewhere.get(), nullptr, "test"), BindOutcome::kSkipped);
      cpu_set_t kept = thread_affinity();
      EXPECT_TRUE(CPU_EQUAL(&kept, &now));
    }
    ASSERT_EQ(hwloc_set_cpubind(topo, original.get(), HWLOC_CPUBIND_THREAD), 0);
  });
}

}  // namespace
}  // namespace purlin::runtime
