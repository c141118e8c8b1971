#include "coll_config.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>

#include "base/log.h"
#include "errors.h"

namespace purlin::shim {
namespace {

// The hints Purlin's kernels do not take (coll_config.h), each warned about once per process:
// a framework may set them on every call.
struct Hint {
  const char* name;
  int ncclCollConfig_t::*field;
};
constexpr Hint kHints[] = {
    {"minCTAs", &ncclCollConfig_t::minCTAs},         {"maxCTAs", &ncclCollConfig_t::maxCTAs},
    {"nvlsCTAs", &ncclCollConfig_t::nvlsCTAs},       {"cgaClusterSize", &ncclCollConfig_t::cgaClusterSize},
    {"CTAPolicy", &ncclCollConfig_t::CTAPolicy},
};
constexpr size_t kHintCount = sizeof(kHints) / sizeof(kHints[0]);
std::atomic<bool> g_warned[kHintCount + 1];  // + the unforced algorithm selection

bool first_time(size_t i) { return !g_warned[i].exchange(true, std::memory_order_relaxed); }

bool has_selection(const ncclCollConfig_t& c) { return c.algSelection != nullptr && c.algSelection[0] != '\0'; }

ncclResult_t record_launch_event(const char* fn, const ncclCollConfig_t& c, cudaStream_t stream) {
  if (c.launchCompletionEvent == nullptr) return ncclSuccess;
  const cudaError_t e = cudaEventRecord(c.launchCompletionEvent, stream);
  if (e == cudaSuccess) return ncclSuccess;
  (void)cudaGetLastError();
  return fail(ncclUnhandledCudaError, fn, "config->launchCompletionEvent: cudaEventRecord failed: %s",
              cudaGetErrorString(e));
}

}  // namespace

ncclResult_t read_coll_config(const char* fn, const ncclCollConfig_t* user,
                              std::shared_ptr<const ncclCollConfig_t>* out) {
  out->reset();
  if (user == nullptr) return ncclSuccess;
  // size, magic and version lead every version of the struct.
  if (user->magic != NCCL_API_MAGIC)
    return fail(ncclInvalidArgument, fn, "config was not initialized with NCCL_COLLCONFIG_INITIALIZER (magic 0x%x)",
                user->magic);
  if (user->size < offsetof(ncclCollConfig_t, ext))
    return fail(ncclInvalidArgument, fn, "config->size %zu is not a known ncclCollConfig_t size", user->size);
  auto c = std::make_shared<ncclCollConfig_t>(ncclCollConfig_t NCCL_COLLCONFIG_INITIALIZER);
  std::memcpy(static_cast<void*>(c.get()), user, std::min(user->size, sizeof(ncclCollConfig_t)));
  // The copy is a whole struct of this version now, the caller's fields and defaults after
  // them; the real NCCL reads that many bytes (or as many as it knows).
  c->size = sizeof(ncclCollConfig_t);
  *out = std::move(c);
  return ncclSuccess;
}

bool needs_real_config_call(const ncclCollConfig_t& c) { return has_selection(c) && c.forceAlgSelection != 0; }

ncclResult_t apply_coll_config(const char* fn, const ncclCollConfig_t& c, cudaStream_t stream) {
  for (size_t i = 0; i < kHintCount; ++i) {
    const int v = c.*kHints[i].field;
    if (v != NCCL_CONFIG_UNDEF_INT && first_time(i))
      PURLIN_WARN("%s: config->%s=%d ignored: Purlin's kernels size themselves (warned once per process)", fn,
                  kHints[i].name, v);
  }
  if (has_selection(c) && first_time(kHintCount))
    PURLIN_WARN("%s: config->algSelection \"%s\" (not forced) ignored: Purlin's algorithm is none of NCCL's "
                "(warned once per process)", fn, c.algSelection);
  return record_launch_event(fn, c, stream);
}

ncclResult_t apply_fields_newer_than(const char* fn, const ncclCollConfig_t& c, int real_version,
                                     cudaStream_t stream) {
  if (real_version >= NCCL_VERSION(2, 32, 0)) return ncclSuccess;
  return record_launch_event(fn, c, stream);
}

}  // namespace purlin::shim
