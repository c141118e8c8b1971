#include "router.h"

#include "checks.h"
#include "comm.h"
#include "forward.h"
#include "group.h"

namespace purlin::shim {

Route comm_route(const ncclComm* c, std::string* reason) {
  if (!c->core->single_host()) {
    *reason = "ranks span several hosts (more than one NVLink domain): everything goes to NCCL";
    return Route::kForward;
  }
  // Native SNAC kernels are not part of this build yet; until they are, the single
  // domain case is forwarded too, and this is the one place that changes when they land.
  *reason = "one host; native collectives not built in this version";
  return Route::kForward;
}

ncclResult_t enqueue(const Descriptor& d) {
  if (ncclResult_t r = check_descriptor(d); r != ncclSuccess) return r;
  if (in_group()) {
    defer_op(d);
    return ncclSuccess;
  }
  return forward_now(d);
}

}  // namespace purlin::shim
