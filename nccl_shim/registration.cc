#include "registration.h"

#include "comm.h"

namespace purlin::shim {

using runtime::RangeKind;

ncclResult_t register_pending(ncclComm* c, const RealNccl* rn) {
  ncclComm_t rc = c->real.load(std::memory_order_acquire);
  for (const runtime::Range& r : c->core->registry().snapshot()) {
    if (r.kind != RangeKind::kRegistration) continue;
    auto* reg = static_cast<Registration*>(const_cast<void*>(r.key));
    if (reg->real_handle != nullptr) continue;
    if (ncclResult_t res = rn->CommRegister(rc, reg->buff, reg->bytes, &reg->real_handle); res != ncclSuccess)
      return res;
  }
  return ncclSuccess;
}

void free_registrations(ncclComm* c) {
  if (!c->core) return;
  for (const runtime::Range& r : c->core->registry().snapshot()) {
    if (r.kind == RangeKind::kRegistration) delete static_cast<const Registration*>(r.key);
    // Windows made without a real NCCL are Purlin records too.
    if (r.kind == RangeKind::kWindow && !r.external) delete static_cast<const NativeWindow*>(r.key);
    c->core->registry().remove(r.key);
  }
}

}  // namespace purlin::shim
