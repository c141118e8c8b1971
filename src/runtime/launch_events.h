// The streams a communicator launched on, each with one event re-recorded after every launch.
// Teardown waits for these, the communicator's own work, and never for the whole device: a
// device-wide synchronization covers neither a peer's GPU nor a peer's process, and stalls
// unrelated work of this process until it ends.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

namespace purlin::runtime {

class LaunchEvents {
 public:
  LaunchEvents() = default;
  ~LaunchEvents() { clear(); }
  LaunchEvents(const LaunchEvents&) = delete;
  LaunchEvents& operator=(const LaunchEvents&) = delete;

  // After a launch on `stream` (the caller's device current; `rank` names it in logs). Streams being captured into a
  // graph are skipped: an event recorded there is the graph's, not a completion to wait for.
  void record(cudaStream_t stream, int rank);
  // Until every recorded event has completed, or `bound` passed: true when all have. A broken
  // context ends every launch, so it counts as completion; `*exiting` is set when the CUDA
  // runtime is unloading (process exit), where nothing more may be called.
  bool wait(std::optional<std::chrono::milliseconds> bound, int rank, bool* exiting);
  // Destroys the events.
  void clear();

 private:
  struct Entry {
    cudaStream_t stream;
    cudaEvent_t event;
  };
  std::mutex mu_;  // the application may launch on one communicator from several threads
  std::vector<Entry> entries_;
};

}  // namespace purlin::runtime
