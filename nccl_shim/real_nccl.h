// The real NCCL that forwarded calls run on, found and loaded with dlopen.
//
// Purlin is itself libnccl.so.2, usually LD_PRELOADed, so dlopen("libnccl.so.2") would
// hand back Purlin. The loader therefore opens candidates by absolute path only and
// rejects any Purlin build. Search order, first acceptable candidate wins:
//   1. PURLIN_NCCL_LIBRARY=<file>: authoritative; when it cannot be used nothing else is
//      tried, so an explicit choice never silently becomes another library;
//   2. a libnccl.so* the process has already loaded that is not Purlin;
//   3. <dir>/libnccl.so.2 for the Python nvidia-nccl wheel next to any loaded object under
//      site-/dist-packages (the NCCL a framework such as PyTorch ships with), then the
//      directories of LD_LIBRARY_PATH, the toolkit named by CUDA_HOME / CUDA_PATH, the
//      loader's standard directories, and /usr/local/cuda.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>

#include "real_nccl_entries.h"

namespace purlin::shim {

// The real library: one typed pointer per NCCL entry point (RealNcclEntries, generated from
// nccl_shim/nccl-2.32.3.symbols), named after the function without its prefix, bound to the
// library's `pnccl` symbol (its `nccl` symbol when a build lacks profiling aliases), so calls
// reach the real implementation even if a profiler interposes the `nccl` names.
//
// The entry points every NCCL since 2.19 has are required: a library lacking one is not
// used. The rest appeared later and stay null when the loaded library predates them;
// callers go through call_real (forward.h), which turns a null one into ncclInvalidUsage.
struct RealNccl : RealNcclEntries {
  std::string path;  // absolute path it was loaded from
  int version = 0;   // from its ncclGetVersion, e.g. 22809
  void* handle = nullptr;  // dlopen handle; never closed (RTLD_NODELETE)
};

// A real NCCL must have every entry point older than this; later ones may be missing.
inline constexpr int kOptionalFrom = NCCL_VERSION(2, 20, 0);

// The entry point's list data ("CommSuspend" or "ncclCommSuspend"); nullptr if unknown.
const RealNcclEntryInfo* entry_info(const char* name);

// "2.29.7" for 22907.
std::string version_text(int code);

// Loaded once, thread-safe, on the first call; nullptr when no usable real NCCL exists,
// after one WARN line saying how to name one (PURLIN_NCCL_LIBRARY=/path/libnccl.so.2).
// Never throws, never exits.
const RealNccl* real_nccl() noexcept;

// Which library real_nccl() uses and how it was found, or where it looked and why each
// candidate was refused; for the per-communicator INFO line.
std::string real_nccl_describe();

// One uncached search with the current environment; real_nccl() keeps the result of the
// first. For tests. `describe` (optional) receives what real_nccl_describe() reports.
std::unique_ptr<RealNccl> search_real_nccl(std::string* describe) noexcept;

}  // namespace purlin::shim
