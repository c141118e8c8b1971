// Forwarding to the real NCCL: the lazily created real communicator and the one place
// that turns a Descriptor into the matching real-NCCL call.
#pragma once

#include <nccl.h>

#include "descriptor.h"
#include "real_nccl.h"

namespace purlin::shim {

// The real NCCL, or a failure naming `fn` and how to point at a library.
ncclResult_t require_real(const char* fn, const RealNccl** out);

// Calls an entry point of the real NCCL that older releases may lack (those after 2.19,
// real_nccl.h): a missing one is an ncclInvalidUsage with one WARN naming `fn`, the real
// NCCL's version and the release that added the function.
ncclResult_t missing_entry(const char* fn);
template <class F, class... Args>
ncclResult_t call_real(const char* fn, F entry, Args... args) {
  if (entry == nullptr) return missing_entry(fn);
  return entry(args...);
}

// An entry point that concerns no communicator of Purlin's (process-wide settings, objects
// the real NCCL made): the real NCCL's own call, or a failure naming `fn` when there is no
// real NCCL or it predates the function.
template <class Entry, class... Args>
ncclResult_t forward_global(const char* fn, Entry RealNcclEntries::*entry, Args... args) {
  const RealNccl* rn = nullptr;
  if (ncclResult_t r = require_real(fn, &rn); r != ncclSuccess) return r;
  return call_real(fn, rn->*entry, args...);
}

// Creates c's real-NCCL communicator if it does not exist yet. Collective over c's ranks:
// rank 0 asks the real NCCL for a unique id and Purlin's bootstrap broadcasts it.
ncclResult_t ensure_real_comm(const char* fn, ncclComm* c);

// Issues d on the real NCCL (ensuring the real communicator first).
ncclResult_t forward_now(const Descriptor& d);

// Issues d on the real communicator rc as it is (d.comm is ignored).
ncclResult_t issue_on_real(const Descriptor& d, ncclComm_t rc);

}  // namespace purlin::shim
