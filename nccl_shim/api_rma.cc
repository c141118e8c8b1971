// NCCL's one-sided calls (2.29): ncclPutSignal, ncclSignal, ncclWaitSignal. Purlin has no
// one-sided path of its own, so the router always forwards them (runs_native), on the real
// communicator and in the order of the group they are part of, like ncclSend.
#include <nccl.h>

#include <memory>

#include "checks.h"
#include "errors.h"
#include "export.h"
#include "router.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface

ncclResult_t submit_rma(Descriptor d, std::shared_ptr<RmaArgs> rma) {
  d.rma = std::move(rma);
  return submit(d);
}

}  // namespace

extern "C" {

ncclResult_t pncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer,
                            ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags,
                            ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclPutSignal";
  return guarded(fn, [&] {
    auto rma = std::make_shared<RmaArgs>();
    rma->peer_win = peerWin;
    rma->peer_win_offset = peerWinOffset;
    rma->sig_idx = sigIdx;
    rma->ctx = ctx;
    rma->flags = flags;
    return submit_rma({OpKind::kPutSignal, localbuff, nullptr, count, datatype, ncclSum, peer, comm, stream},
                      std::move(rma));
  });
}

// NCCL describes a signal as an int8 call with no data.
ncclResult_t pncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclSignal";
  return guarded(fn, [&] {
    auto rma = std::make_shared<RmaArgs>();
    rma->sig_idx = sigIdx;
    rma->ctx = ctx;
    rma->flags = flags;
    return submit_rma({OpKind::kSignal, nullptr, nullptr, 0, ncclInt8, ncclSum, peer, comm, stream},
                      std::move(rma));
  });
}

ncclResult_t pncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream) {
  const char* fn = "ncclWaitSignal";
  return guarded(fn, [&] {
    if (nDesc < 0) return fail(ncclInvalidArgument, fn, "nDesc %d is negative", nDesc);
    if (nDesc > 0) {
      if (ncclResult_t r = check_ptr(fn, "signalDescs", signalDescs); r != ncclSuccess) return r;
    }
    auto rma = std::make_shared<RmaArgs>();
    if (nDesc > 0) rma->waits.assign(signalDescs, signalDescs + nDesc);
    return submit_rma({OpKind::kWaitSignal, nullptr, nullptr, 0, ncclInt32, ncclSum, -1, comm, stream},
                      std::move(rma));
  });
}

ncclResult_t ncclPutSignal(const void*, size_t, ncclDataType_t, int, ncclWindow_t, size_t, int, int, unsigned int,
                           ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclPutSignal);
ncclResult_t ncclSignal(int, int, int, unsigned int, ncclComm_t, cudaStream_t) PURLIN_WEAK_ALIAS_OF_P(ncclSignal);
ncclResult_t ncclWaitSignal(int, ncclWaitSignalDesc_t*, ncclComm_t, cudaStream_t)
    PURLIN_WEAK_ALIAS_OF_P(ncclWaitSignal);

}  // extern "C"
