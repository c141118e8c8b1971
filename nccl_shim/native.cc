#include "native.h"

#include <cuda_runtime.h>

#include <optional>
#include <string>

#include "checks.h"
#include "coll_config.h"
#include "comm.h"
#include "device_scope.h"
#include "errors.h"
#include "launch/pairs.h"
#include "native_call.h"

namespace purlin::shim {

namespace {

// A buffer the kernel will touch must be reachable from the GPU. Ordinary host memory (a stack
// array, malloc) is not, unless the platform lets GPUs use pageable memory (HMM/ATS); a kernel
// touching it would fault and poison the whole CUDA context. One driver lookup per buffer; a
// replayed CUDA graph pays nothing.
ncclResult_t check_reachable(const char* fn, const char* name, const void* p, int device) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    attr.type = cudaMemoryTypeUnregistered;
  }
  if (attr.type != cudaMemoryTypeUnregistered) return ncclSuccess;
  int pageable = 0;
  if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) != cudaSuccess) {
    (void)cudaGetLastError();
    pageable = 0;
  }
  if (pageable != 0) return ncclSuccess;
  return fail(ncclInvalidArgument, fn, "%s %p is host memory the GPU cannot reach (allocate it with cudaMalloc)",
              name, p);
}

}  // namespace

ncclResult_t prepare_native(Descriptor* d) {
  const char* fn = op_kind_name(d->kind);
  BufferUse use{};
  if (buffer_use(*d, d->comm->rank, d->comm->nranks, &use)) {
    if (use.reads_send && use.send_elems != 0) {
      if (ncclResult_t r = check_reachable(fn, "sendbuff", d->sendbuff, d->comm->cuda_device); r != ncclSuccess)
        return r;
    }
    // In place, the one lookup above answered for both.
    const bool looked_up = use.reads_send && use.send_elems != 0 && d->recvbuff == d->sendbuff;
    if (use.writes_recv && use.recv_elems != 0 && !looked_up) {
      if (ncclResult_t r = check_reachable(fn, "recvbuff", d->recvbuff, d->comm->cuda_device); r != ncclSuccess)
        return r;
    }
  }
  // Only reductions carry an op other than ncclSum (api_*.cc), and validation accepted it.
  if (static_cast<int>(d->op) >= ncclNumOps) {
    std::optional<UserOp> op = d->comm->user_ops.find(d->op);
    if (!op)  // destroyed by another thread since validation
      return fail(ncclInvalidArgument, fn, "op %d is not created on this comm", static_cast<int>(d->op));
    d->scalar_bits = op->scalar_bits;
    d->scalar_device = op->scalar_device;
  }
  return ncclSuccess;
}

ncclResult_t issue_native(const Descriptor& d) {
  runtime::DeviceState* state = d.comm->native.get();
  if (state == nullptr)  // finalized between the call and the end of its group
    return fail(ncclInvalidUsage, op_kind_name(d.kind), "comm %p has no native state (finalized?)",
                static_cast<const void*>(d.comm));
  // One thread may drive several GPUs' communicators inside a group (nccl-tests -g N): the
  // kernel must go to the communicator's device, whose stream the caller passed.
  DeviceScope device(d.comm->cuda_device);
  if (d.coll != nullptr) {
    const std::string fn = std::string(op_kind_name(d.kind)) + "Config";
    if (ncclResult_t r = apply_coll_config(fn.c_str(), *d.coll, d.stream); r != ncclSuccess) return r;
  }
  const launch::Call call = to_call(d);
  const launch::Result result = launch::launch(state->handle(), state->control(), state->policy(),
                                               d.comm->native_smem, call);
  const ncclResult_t r = launch_result(op_kind_name(d.kind), result);
  // What teardown waits for instead of the whole device. A one-rank device copy touches none
  // of the communicator's memory and, at copy speed, cannot afford an event record per call.
  if (r == ncclSuccess && result.kernel) state->launched_on(d.stream);
  return r;
}

namespace {

// Makes `waiter` wait for the work enqueued so far on `on`; one event, released at once (CUDA
// keeps it alive until the wait is resolved). Legal during capture, where it joins the streams.
ncclResult_t join(const char* fn, cudaStream_t waiter, cudaStream_t on) {
  cudaEvent_t e = nullptr;
  cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  if (r == cudaSuccess) r = cudaEventRecord(e, on);
  if (r == cudaSuccess) r = cudaStreamWaitEvent(waiter, e, 0);
  if (e != nullptr) (void)cudaEventDestroy(e);
  if (r != cudaSuccess) return fail(ncclUnhandledCudaError, fn, "joining the group's streams: %s", cudaGetErrorString(r));
  return ncclSuccess;
}

}  // namespace

ncclResult_t issue_native_pairs(const std::vector<Descriptor>& ops) {
  if (ops.empty()) return ncclSuccess;
  const Descriptor& first = ops.front();
  const char* fn = op_kind_name(first.kind);
  ncclComm* comm = first.comm;
  runtime::DeviceState* state = comm->native.get();
  if (state == nullptr)
    return fail(ncclInvalidUsage, fn, "comm %p has no native state (finalized?)", static_cast<const void*>(comm));
  DeviceScope device(comm->cuda_device);
  std::vector<snac::PairOp> pair_ops;
  pair_ops.reserve(ops.size());
  for (const Descriptor& d : ops) {
    const auto bytes = static_cast<std::uint64_t>(d.count) * type_size(d.type);
    if (d.kind == OpKind::kSend) {
      pair_ops.push_back({d.sendbuff, nullptr, bytes, d.root, snac::PairDirection::send});
    } else {
      pair_ops.push_back({nullptr, d.recvbuff, bytes, d.root, snac::PairDirection::recv});
    }
  }
  const cudaStream_t stream = first.stream;
  for (const Descriptor& d : ops) {
    if (d.stream == stream) continue;
    if (ncclResult_t r = join(fn, stream, d.stream); r != ncclSuccess) return r;
  }
  const launch::Result result = launch::launch_pairs(state->pair_handle(), state->control(), comm->native_smem,
                                                     state->pair_workers(), pair_ops.data(),
                                                     static_cast<int>(pair_ops.size()), stream);
  const ncclResult_t r = launch_result(fn, result);
  if (r != ncclSuccess) return r;
  if (result.kernel) state->launched_on(stream);
  for (const Descriptor& d : ops) {
    if (d.stream == stream) continue;
    if (ncclResult_t j = join(fn, d.stream, stream); j != ncclSuccess) return j;
  }
  return ncclSuccess;
}

}  // namespace purlin::shim
