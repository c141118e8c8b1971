#include "runtime/launch_events.h"

#include <thread>

#include "base/log.h"
#include "runtime/cuda_check.h"

namespace purlin::runtime {
namespace {

// An application that makes a stream per call would otherwise grow the list without end; past
// this many streams an entry whose launches have completed is reused before a new one is made.
constexpr std::size_t kReuseAfter = 16;

}  // namespace

void LaunchEvents::record(cudaStream_t stream, int rank) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (const cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess) {
    (void)cudaGetLastError();  // e.g. the legacy stream while another captures globally
    return;
  }
  if (capture != cudaStreamCaptureStatusNone) return;
  std::lock_guard lock(mu_);
  Entry* entry = nullptr;
  for (Entry& e : entries_) {
    if (e.stream == stream) entry = &e;
  }
  if (entry == nullptr && entries_.size() >= kReuseAfter) {
    for (Entry& e : entries_) {
      if (cudaEventQuery(e.event) == cudaSuccess) {
        e.stream = stream;
        entry = &e;
        break;
      }
    }
    (void)cudaGetLastError();  // cudaErrorNotReady of the ones still running
  }
  if (entry == nullptr) {
    cudaEvent_t event = nullptr;
    if (cuda_failed(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), rank, "cudaEventCreateWithFlags")) {
      return;
    }
    entries_.push_back({stream, event});
    entry = &entries_.back();
  }
  (void)cuda_failed(cudaEventRecord(entry->event, stream), rank, "cudaEventRecord (launch completion)");
}

bool LaunchEvents::wait(std::optional<std::chrono::milliseconds> bound, int rank, bool* exiting) {
  std::lock_guard lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + bound.value_or(std::chrono::milliseconds(0));
  for (const Entry& entry : entries_) {
    for (;;) {
      const cudaError_t e = bound ? cudaEventQuery(entry.event) : cudaEventSynchronize(entry.event);
      if (e == cudaSuccess) break;
      if (e == cudaErrorCudartUnloading) {
        (void)cudaGetLastError();
        *exiting = true;
        return true;
      }
      if (e != cudaErrorNotReady) {
        (void)cuda_failed(e, rank, "waiting for the communicator's launches");
        break;
      }
      (void)cudaGetLastError();
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  return true;
}

void LaunchEvents::clear() {
  std::lock_guard lock(mu_);
  for (const Entry& entry : entries_) {
    if (const cudaError_t e = cudaEventDestroy(entry.event); e != cudaSuccess) (void)cudaGetLastError();
  }
  entries_.clear();
}

}  // namespace purlin::runtime
