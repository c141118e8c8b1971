#include "runtime/launch_trace.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "snac/trace.h"

namespace purlin::runtime {

LaunchTrace::~LaunchTrace() { finish(); }

std::uint64_t* LaunchTrace::start(int rank, int workers) {
  file_ = env::get_string("PURLIN_TRACE_FILE");
  if (file_.empty() || workers <= 0) return nullptr;
  const std::size_t bytes = snac::trace_words(workers) * sizeof(std::uint64_t);
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMemset(p, 0, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    if (p != nullptr) (void)cudaFree(p);
    PURLIN_WARN("PURLIN_TRACE_FILE: rank %d could not allocate its trace; tracing stays off", rank);
    return nullptr;
  }
  words_ = static_cast<std::uint64_t*>(p);
  rank_ = rank;
  workers_ = workers;
  return words_;
}

void LaunchTrace::finish() {
  if (words_ == nullptr) return;
  std::vector<std::uint64_t> host(snac::trace_words(workers_));
  const bool copied = cudaMemcpy(host.data(), words_, host.size() * sizeof(std::uint64_t),
                                 cudaMemcpyDeviceToHost) == cudaSuccess;
  (void)cudaGetLastError();
  (void)cudaFree(words_);
  words_ = nullptr;
  if (!copied) return;
  const std::string path = file_ + ".rank" + std::to_string(rank_);
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    PURLIN_WARN("PURLIN_TRACE_FILE: cannot write %s", path.c_str());
    return;
  }
  // Times are the GPU's global timer in ns; a point a worker did not pass, or a CTA a launch
  // did not have, reads 0; a row whose every time reads 0 is left out.
  // Columns in TracePoint order, named by kTracePointNames.
  using snac::TracePoint;
  std::fprintf(f, "rank,launch_slot,cta");
  for (const char* name : snac::kTracePointNames) std::fprintf(f, ",%s", name);
  std::fprintf(f, "\n");
  for (snac::Epoch slot = 0; slot < snac::kTraceLaunches; ++slot) {
    for (int w = 0; w < workers_; ++w) {
      const auto at = [&](std::uint32_t p) {
        return static_cast<unsigned long long>(
            host[snac::trace_index(slot, w, workers_, static_cast<TracePoint>(p))]);
      };
      bool passed = false;  // any time (a pair launch records no entry: snac/trace.h)
      for (std::uint32_t p = 0; p < static_cast<std::uint32_t>(TracePoint::group); ++p) {
        passed |= at(p) != 0;
      }
      if (!passed) continue;
      std::fprintf(f, "%d,%llu,%d", rank_, static_cast<unsigned long long>(slot), w);
      for (std::uint32_t p = 0; p < snac::kTracePoints; ++p) std::fprintf(f, ",%llu", at(p));
      std::fprintf(f, "\n");
    }
  }
  std::fclose(f);
}

}  // namespace purlin::runtime
