#include "router.h"

#include "base/env.h"
#include "checks.h"
#include "comm.h"
#include "errors.h"
#include "forward.h"
#include "group.h"
#include "native.h"

namespace purlin::shim {

Route comm_route(const ncclComm* c, std::string* reason) {
  // PURLIN_NATIVE is read on every rank and never exchanged: it must be set alike on all.
  const RouteFacts facts = route_facts(env::get_int("PURLIN_NATIVE", 1), c->core->single_host(), c->core->peers());
  return decide_route(facts, reason);
}

ncclResult_t enqueue(const Descriptor& d) {
  if (ncclResult_t r = check_descriptor(d); r != ncclSuccess) return r;
  const bool native = d.comm->native != nullptr && runs_native(d.kind);
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
  Descriptor nd = d;
  if (ncclResult_t r = prepare_native(&nd); r != ncclSuccess) return r;
  if (in_group()) {
    defer_op(nd, true);
    return ncclSuccess;
  }
  return issue_native(nd);
}

}  // namespace purlin::shim
