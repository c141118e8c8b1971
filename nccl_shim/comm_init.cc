#include "comm_init.h"

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "base/env.h"
#include "base/fault.h"
#include "base/log.h"
#include "comm_config.h"
#include "device_scope.h"
#include "errors.h"
#include "peer_watch.h"
#include "launch/bridge.h"
#include "real_nccl.h"
#include "router.h"
#include "runtime/topology/topology.h"

namespace purlin::shim {
namespace {

ncclResult_t check_bool(const char* fn, const char* name, int v) {
  if (v != NCCL_CONFIG_UNDEF_INT && v != 0 && v != 1)
    return fail(ncclInvalidArgument, fn, "config->%s=%d must be 0 or 1", name, v);
  return ncclSuccess;
}

ncclResult_t resolve_config(const char* fn, const ncclConfig_t* user, const ncclComm* parent,
                            ncclConfig_t* cfg) {
  *cfg = parent != nullptr ? parent->config : ncclConfig_t NCCL_CONFIG_INITIALIZER;
  if (user != nullptr) {
    if (ncclResult_t r = read_comm_config(fn, *user, cfg); r != ncclSuccess) return r;
  }
  if (cfg->blocking == NCCL_CONFIG_UNDEF_INT)
    cfg->blocking = static_cast<int>(env::get_int("NCCL_COMM_BLOCKING", 1));
  if (ncclResult_t r = check_bool(fn, "blocking", cfg->blocking); r != ncclSuccess) return r;
  if (ncclResult_t r = check_bool(fn, "splitShare", cfg->splitShare); r != ncclSuccess) return r;
  if (ncclResult_t r = check_bool(fn, "collnetEnable", cfg->collnetEnable); r != ncclSuccess) return r;
  if (cfg->cgaClusterSize != NCCL_CONFIG_UNDEF_INT && (cfg->cgaClusterSize < 0 || cfg->cgaClusterSize > 8))
    return fail(ncclInvalidArgument, fn, "config->cgaClusterSize=%d must be in [0, 8]", cfg->cgaClusterSize);
  const bool min_set = cfg->minCTAs != NCCL_CONFIG_UNDEF_INT, max_set = cfg->maxCTAs != NCCL_CONFIG_UNDEF_INT;
  if ((min_set && cfg->minCTAs < 1) || (max_set && cfg->maxCTAs < 1) ||
      (min_set && max_set && cfg->minCTAs > cfg->maxCTAs))
    return fail(ncclInvalidArgument, fn, "config->minCTAs=%d / maxCTAs=%d must be >= 1 with min <= max",
                cfg->minCTAs, cfg->maxCTAs);
  return ncclSuccess;
}

}  // namespace

int gpu_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

int current_device() {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return dev;
}

namespace {

// Log lines name the caller's CUDA device, as NCCL's do; base/log cannot ask CUDA itself.
[[maybe_unused]] const bool g_log_names_device = (log::set_device_query(&current_device), true);

// NCCL's version line, once per process at the first communicator: the version
// ncclGetVersion reports first, for the tools that read it, then Purlin's own and the real
// NCCL it forwards to.
void log_version_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!log::version_enabled()) return;  // spares loading the real NCCL just to name it
    const RealNccl* rn = real_nccl();
    log::write_version("NCCL version %s+cuda%d.%d (Purlin %s, the NCCL %s ABI; real NCCL: %s)",
                       version_text(rn != nullptr ? rn->version : NCCL_VERSION_CODE).c_str(),
                       CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10, PURLIN_VERSION,
                       version_text(NCCL_VERSION_CODE).c_str(), real_nccl_describe().c_str());
  });
}

}  // namespace

ncclResult_t new_comm(const char* fn, int nranks, int rank, int cuda_device,
                      const ncclConfig_t* config, const ncclComm* parent, ncclComm** out) {
  log_version_once();
  ncclConfig_t cfg;
  if (ncclResult_t r = resolve_config(fn, config, parent, &cfg); r != ncclSuccess) return r;
  fault::allocation("new_comm");
  auto* c = new ncclComm();
  c->rank = rank;
  c->nranks = nranks;
  c->cuda_device = cuda_device;
  c->config = cfg;
  c->blocking = cfg.blocking != 0;
  if (cfg.commName != nullptr) {
    c->comm_name = cfg.commName;
    c->config.commName = c->comm_name.c_str();
  }
  // Forwarded calls create the real communicator later, when the caller's string may be gone.
  if (cfg.netName != nullptr) {
    c->net_name = cfg.netName;
    c->config.netName = c->net_name.c_str();
  }
  live_add(c);
  *out = c;
  return ncclSuccess;
}

void discard_comm(ncclComm* c) {
  live_remove(c);
  delete_comm(c);
}

namespace {

// One INFO line when the GPU gives a kernel family less shared memory than it was compiled for
// (launch/kernel_smem.h): its Atom then runs with smaller stages, or on registers only.
void report_smem(const ncclComm& c) {
  const launch::KernelSmem& s = c.native_smem;
  if (s.copy.workspace_bytes == launch::CopyConfig::workspace_bytes &&
      s.reduce.workspace_bytes == launch::ReduceConfig::workspace_bytes) {
    return;
  }
  PURLIN_INFO(kInit,
              "rank %d/%d: less shared memory per block than the kernels were built for: copies stage %u of "
              "%d bytes (x%d), reductions %u of %d (x%d); 0 runs on registers only",
              c.rank, c.nranks, s.copy.stage_bytes, launch::CopyConfig::stage_bytes, launch::CopyConfig::stages,
              s.reduce.stage_bytes, launch::ReduceConfig::stage_bytes, launch::ReduceConfig::stages);
}

// Creates the SNAC device state of a native communicator. Collective: every rank took the
// same routing decision, so every rank is here, and a failure fails all of them alike.
ncclResult_t create_native(ncclComm* c) {
  runtime::DeviceStateConfig config = runtime::DeviceStateConfig::from_env();
  config.ctas = native_cta_bounds(c->config);
  // Each rank then holds a connection from every peer, which the peer watcher observes.
  ncclResult_t res = c->core->bootstrap().connect_all();
  if (res == ncclSuccess) res = runtime::DeviceState::create(*c->core, config, &c->native);
  if (res == ncclSuccess) {
    // Before any kernel of this communicator runs (launch::load_kernels says why).
    DeviceScope device(c->cuda_device);
    if (const cudaError_t e = launch::load_kernels(c->nranks, &c->native_smem); e != cudaSuccess) {
      PURLIN_WARN("rank %d/%d: loading the native kernels failed: %s", c->rank, c->nranks, cudaGetErrorString(e));
      res = ncclUnhandledCudaError;
    } else if (!c->native_smem.ok) {
      PURLIN_WARN("rank %d/%d: the native kernels cannot run on this GPU: %s (PURLIN_SMEM_LIMIT_BYTES lowers "
                  "the limit when set)",
                  c->rank, c->nranks, c->native_smem.why);
      res = ncclInvalidUsage;
    } else {
      report_smem(*c);
    }
  }
  if (res != ncclSuccess) {
    c->native.reset();
    return fail(res, "ncclCommInitRank",
                "rank %d/%d: native device state could not be created (error %d); PURLIN_NATIVE=0 on every "
                "rank forwards everything to NCCL instead",
                c->rank, c->nranks, static_cast<int>(res));
  }
  start_peer_watch(c);
  return ncclSuccess;
}

}  // namespace

ncclResult_t run_init(ncclComm* c, const ncclUniqueId& id) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (char byte : id.internal) hash = (hash ^ static_cast<unsigned char>(byte)) * 0x100000001b3ull;
  c->id_hash = hash;
  // Without any GPU (a CI machine) communicators still form, so that bootstrap, groups
  // and forwarding are testable; they simply have no device to run on, and tell their
  // peers so (cuda_device -1), which keeps them off the native route.
  const bool has_gpu = c->cuda_device >= 0 && gpu_count() > 0;
  if (has_gpu) {
    if (cudaSetDevice(c->cuda_device) != cudaSuccess) {
      (void)cudaGetLastError();
      c->state.store(ncclInvalidArgument, std::memory_order_release);
      return fail(ncclInvalidArgument, "ncclCommInitRank", "CUDA device %d cannot be used", c->cuda_device);
    }
    (void)runtime::bind_thread_near_gpu(c->cuda_device);
  }
  std::unique_ptr<runtime::Communicator> core;
  ncclResult_t res = runtime::Communicator::create(id, c->rank, c->nranks, has_gpu ? c->cuda_device : -1, &core);
  if (res == ncclSuccess) {
    c->core = std::move(core);
    std::string reason;
    const Route route = comm_route(c, &reason);
    if (route == Route::kNative) {
      res = create_native(c);
      (void)process_warnings().warn("ncclCommInitRank", c->config);
    }
    const auto& me = c->core->peers()[c->rank];
    const std::string device_mem =
        c->native ? ", " + std::to_string(c->native->device_bytes() >> 20) + " MiB of device state" : "";
    if (res == ncclSuccess)
      PURLIN_INFO(kInit, "comm %p%s%s rank %d/%d cudaDev %d busId %s: route=%s (%s%s); real NCCL: %s",
                  static_cast<void*>(c), c->comm_name.empty() ? "" : " name ", c->comm_name.c_str(), c->rank,
                  c->nranks, c->cuda_device, me.pci_bus_id[0] ? me.pci_bus_id : "none",
                  route == Route::kNative ? "native" : "forward", reason.c_str(), device_mem.c_str(),
                  real_nccl_describe().c_str());
  }
  c->state.store(res, std::memory_order_release);
  return res;
}

}  // namespace purlin::shim
