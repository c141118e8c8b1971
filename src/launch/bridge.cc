// The bridge's dispatch: a Call's runtime indices select one entry of the instance tables
// (instances.h), whose host function converts, plans and launches.
#include "launch/bridge.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "base/env.h"
#include "launch/call.h"
#include "launch/instances.h"
#include "launch/pairs.h"

namespace purlin::launch {
namespace {

using ReduceTableFn = const ReduceKernels& (*)();

template <std::size_t... T>
constexpr std::array<ReduceTableFn, sizeof...(T)> reduce_tables(std::index_sequence<T...>) {
  return {&reduce_kernels<static_cast<int>(T)>...};
}
// Indexed by ncclDataType_t; each entry lives in its own translation unit.
constexpr std::array<ReduceTableFn, kElementTypes> kReduceTables =
    reduce_tables(std::make_index_sequence<kElementTypes>{});

// The kernel for `call`, or the argument that names none.
Result lookup(const Call& call, const Kernel*& kernel) {
  const int c = static_cast<int>(call.collective);
  if (c < 0 || c >= kCollectives) return {snac::Status::bad_argument, cudaSuccess, "collective", false};
  if (call.type < 0 || call.type >= kElementTypes) {
    return {snac::Status::bad_argument, cudaSuccess, "type", false};
  }
  kernel = find_kernel(call.collective, call.type, call.op);
  if (kernel == nullptr) return {snac::Status::bad_argument, cudaSuccess, "op", false};
  return {};
}

}  // namespace

const Kernel* find_kernel(Collective collective, int type, int op) {
  const int c = static_cast<int>(collective);
  if (c < 0 || c >= kCollectives || type < 0 || type >= kElementTypes) return nullptr;
  const auto row = static_cast<std::size_t>(group_index(collective));
  if (!reduces(collective)) return &copy_kernels().at[row];
  if (op < 0 || op >= kReduceOps) return nullptr;
  return &kReduceTables[static_cast<std::size_t>(type)]().at[row][static_cast<std::size_t>(op)];
}

Result launch(const snac::Handle& handle, const snac::DeviceControl& control,
              const snac::Policy& policy, const KernelSmem& smem, const Call& call) {
  const Kernel* kernel = nullptr;
  if (Result r = lookup(call, kernel); !r.ok()) return r;
  return kernel->launch(handle, control, policy, smem, call);
}

namespace {

// The limits of `device` as the hardware reports them.
cudaError_t device_limits(int device, DeviceLimits* out) {
  int major = 0;
  int per_block = 0;
  int per_sm = 0;
  int reserved = 0;
  for (auto [attribute, value] : {std::pair{cudaDevAttrComputeCapabilityMajor, &major},
                                  std::pair{cudaDevAttrMaxSharedMemoryPerBlockOptin, &per_block},
                                  std::pair{cudaDevAttrMaxSharedMemoryPerMultiprocessor, &per_sm},
                                  std::pair{cudaDevAttrReservedSharedMemoryPerBlock, &reserved}}) {
    if (const cudaError_t e = cudaDeviceGetAttribute(value, attribute, device); e != cudaSuccess) return e;
  }
  *out = {major, static_cast<std::size_t>(per_block), static_cast<std::size_t>(per_sm),
          static_cast<std::size_t>(reserved)};
  return cudaSuccess;
}

DeviceLimits capped_by_env(DeviceLimits d) {
  if (const auto limit = env::find_int("PURLIN_SMEM_LIMIT_BYTES"); limit && *limit >= 0) {
    d.smem_per_block = std::min(d.smem_per_block, static_cast<std::size_t>(*limit));
  }
  return d;
}

// Loads one kernel and lets it use its largest shared-memory footprint within the device's
// limit; `static_smem` grows to the kernel's static shared memory.
cudaError_t prepare_kernel(const Kernel& k, const DeviceLimits& d, std::size_t& static_smem) {
  cudaFuncAttributes attributes{};
  if (const cudaError_t e = cudaFuncGetAttributes(&attributes, k.function); e != cudaSuccess) return e;
  static_smem = std::max(static_smem, attributes.sharedSizeBytes);
  const std::size_t room =
      d.smem_per_block > attributes.sharedSizeBytes ? d.smem_per_block - attributes.sharedSizeBytes : 0;
  const std::size_t allowed = std::min(static_cast<std::size_t>(k.max_smem_bytes), room);
  return cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(allowed));
}

cudaError_t prepare_all_kernels(const DeviceLimits& d, std::size_t& static_smem) {
  for (const Kernel& k : copy_kernels().at) {
    if (const cudaError_t e = prepare_kernel(k, d, static_smem); e != cudaSuccess) return e;
  }
  const PairKernelFunctions pairs = pair_kernel_functions();
  for (const void* f : {pairs.small, pairs.large}) {
    Kernel k;
    k.function = f;
    k.max_smem_bytes = pairs.max_smem_bytes;
    if (const cudaError_t e = prepare_kernel(k, d, static_smem); e != cudaSuccess) return e;
  }
  for (const ReduceTableFn table : kReduceTables) {
    for (const auto& row : table().at) {
      for (const Kernel& k : row) {
        if (const cudaError_t e = prepare_kernel(k, d, static_smem); e != cudaSuccess) return e;
      }
    }
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t load_kernels(int ranks, KernelSmem* smem) {
  *smem = {};
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  DeviceLimits limits;
  if (const cudaError_t e = device_limits(device, &limits); e != cudaSuccess) return e;
  // Once per device and process: a later communicator's creation must not touch functions
  // while earlier communicators' kernels run (the reason this is not done at launch). The
  // mutex holds back every other rank thread until the kernels are ready.
  static std::mutex mutex;
  static std::map<int, std::size_t> static_smem;  // per prepared device: the kernels' largest
  std::lock_guard<std::mutex> lock(mutex);
  auto it = static_smem.find(device);
  if (it == static_smem.end()) {
    std::size_t most = 0;
    if (const cudaError_t e = prepare_all_kernels(limits, most); e != cudaSuccess) return e;
    it = static_smem.emplace(device, most).first;
  }
  *smem = select_smem(capped_by_env(limits), ranks, it->second);
  return cudaSuccess;
}

int workers(const snac::Handle& handle, const snac::Policy& policy, const Call& call) {
  const Kernel* kernel = nullptr;
  if (!lookup(call, kernel).ok()) return 0;
  return kernel->workers(handle, policy, call);
}

}  // namespace purlin::launch
