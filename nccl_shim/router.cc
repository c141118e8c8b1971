#include "router.h"

#include "base/env.h"
#include "checks.h"
#include "coll_config.h"
#include "comm.h"
#include "errors.h"
#include "forward.h"
#include "group.h"
#include "native.h"
#include "native_call.h"

namespace purlin::shim {

Route comm_route(const ncclComm* c, std::string* reason) {
  // PURLIN_NATIVE is read on every rank and never exchanged: it must be set alike on all.
  const RouteFacts facts = route_facts(env::get_int("PURLIN_NATIVE", 1), c->core->single_host(), c->core->peers());
  return decide_route(facts, reason);
}

ncclResult_t enqueue(const Descriptor& d) {
  if (ncclResult_t r = check_descriptor(d); r != ncclSuccess) return r;
  // A config that only the real NCCL can serve takes the call there (coll_config.h).
  const bool native = d.comm->native != nullptr && runs_native(d.kind) &&
                      !(d.coll != nullptr && needs_real_config_call(*d.coll));
  if (!native && is_v(d.kind))
    return fail(ncclInvalidUsage, op_kind_name(d.kind),
                "%s needs a native communicator (all ranks on one host, a GPU each, PURLIN_NATIVE unset or 1); "
                "this one forwards to NCCL (see purlinCommIsNative)",
                op_kind_name(d.kind));
  if (!native) {
    if (in_group()) {
      defer_op(d, false);
      return ncclSuccess;
    }
    return forward_now(d);
  }
  if (moves_nothing(d, d.comm->nranks)) return ncclSuccess;
  Descriptor nd = d;
  if (ncclResult_t r = prepare_native(&nd); r != ncclSuccess) return r;
  if (in_group()) {
    defer_op(nd, true);
    return ncclSuccess;
  }
  if (is_p2p(nd.kind)) return issue_native_pairs({nd});
  return issue_native(nd);
}

ncclResult_t submit(const Descriptor& d) {
  return guarded(op_kind_name(d.kind), [&] {
    if (ncclComm_t rc = passthrough(d.comm); rc != nullptr) return issue_on_real(d, rc);
    return enqueue(d);
  });
}

}  // namespace purlin::shim
