// The bridge's dispatch: a Call's runtime indices select one entry of the instance tables
// (instances.h), whose host function converts, plans and launches.
#include "launch/bridge.h"

#include <array>
#include <cstddef>
#include <mutex>
#include <set>
#include <utility>

#include "launch/call.h"
#include "launch/instances.h"

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
              const snac::Policy& policy, const Call& call) {
  const Kernel* kernel = nullptr;
  if (Result r = lookup(call, kernel); !r.ok()) return r;
  return kernel->launch(handle, control, policy, call);
}

namespace {

// Loads one kernel and lets it use its largest shared-memory footprint.
cudaError_t prepare_kernel(const Kernel& k) {
  cudaFuncAttributes attributes{};
  if (const cudaError_t e = cudaFuncGetAttributes(&attributes, k.function); e != cudaSuccess) return e;
  return cudaFuncSetAttribute(k.function, cudaFuncAttributeMaxDynamicSharedMemorySize, k.max_smem_bytes);
}

cudaError_t prepare_all_kernels() {
  for (const Kernel& k : copy_kernels().at) {
    if (const cudaError_t e = prepare_kernel(k); e != cudaSuccess) return e;
  }
  for (const ReduceTableFn table : kReduceTables) {
    for (const auto& row : table().at) {
      for (const Kernel& k : row) {
        if (const cudaError_t e = prepare_kernel(k); e != cudaSuccess) return e;
      }
    }
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t load_kernels() {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  // Once per device and process: a later communicator's creation must not touch functions
  // while earlier communicators' kernels run (the reason this is not done at launch). The
  // mutex holds back every other rank thread until the kernels are ready.
  static std::mutex mutex;
  static std::set<int> prepared;
  std::lock_guard<std::mutex> lock(mutex);
  if (prepared.contains(device)) return cudaSuccess;
  if (const cudaError_t e = prepare_all_kernels(); e != cudaSuccess) return e;
  prepared.insert(device);
  return cudaSuccess;
}

int workers(const snac::Handle& handle, const snac::Policy& policy, const Call& call) {
  const Kernel* kernel = nullptr;
  if (!lookup(call, kernel).ok()) return 0;
  return kernel->workers(handle, policy, call);
}

}  // namespace purlin::launch
