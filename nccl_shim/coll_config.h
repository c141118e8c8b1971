// Per-collective configurations (ncclCollConfig_t, the last argument of ncclAllReduceConfig
// and the other ncclXConfig collectives, NCCL 2.31): how Purlin reads one and which of its
// requests Purlin serves itself.
//
// The rule: a call runs where it would run without the config (natively, or forwarded as
// the plain call when the real NCCL predates the ncclXConfig functions) unless the config
// asks for something only the real NCCL's own collectives can give, a forced algorithm
// selection. Everything else is served or has no observable effect:
//   ext               vendor extensions; NCCL itself ignores every one
//   userProfilerTag   only profiler plugins see it, and Purlin's kernels have none
//   launchCompletionEvent  recorded on the stream right before the collective, which is what
//                     NCCL does where CUDA cannot record it at launch completion (< 12.3)
//   minCTAs, maxCTAs, nvlsCTAs, cgaClusterSize, CTAPolicy  resource hints that Purlin's
//                     kernels do not take (they size themselves): ignored, with one WARN
//                     per field and process
//   algSelection with forceAlgSelection=0  a preference; Purlin's algorithm is none of
//                     NCCL's, which such a selection allows
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>

namespace purlin::shim {

// The caller's config copied by its size, as NCCL reads a versioned struct: a shorter,
// older one (2.31's lacks launchCompletionEvent) leaves the later fields at their
// NCCL_COLLCONFIG_INITIALIZER defaults. `user` null: *out stays null, the plain call.
// ncclInvalidArgument, with one WARN naming `fn`, for a config that NCCL_COLLCONFIG_INITIALIZER
// did not make.
ncclResult_t read_coll_config(const char* fn, const ncclCollConfig_t* user,
                              std::shared_ptr<const ncclCollConfig_t>* out);

// True when only the real NCCL's ncclXConfig can serve `c` (a forced algorithm selection).
bool needs_real_config_call(const ncclCollConfig_t& c);

// Serves `c` for a collective that Purlin issues without handing the config on (native,
// or the real NCCL's plain call): records the launch-completion event on `stream` and
// warns once about each ignored hint. Call on the communicator's device, right before the
// collective is issued.
ncclResult_t apply_coll_config(const char* fn, const ncclCollConfig_t& c, cudaStream_t stream);

// For a real NCCL that takes the config but predates one of its fields: serves what that
// NCCL would drop (2.31 has no launchCompletionEvent).
ncclResult_t apply_fields_newer_than(const char* fn, const ncclCollConfig_t& c, int real_version,
                                     cudaStream_t stream);

}  // namespace purlin::shim
