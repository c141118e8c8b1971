// The launch timeline of one rank (snac/trace.h) for profiling: allocated only when
// PURLIN_TRACE_FILE is set, written to "<file>.rank<r>" when the communicator is destroyed.
#pragma once

#include <cstdint>
#include <string>

namespace purlin::runtime {

class LaunchTrace {
 public:
  LaunchTrace() = default;
  ~LaunchTrace();
  LaunchTrace(const LaunchTrace&) = delete;
  LaunchTrace& operator=(const LaunchTrace&) = delete;

  // Device words for DeviceControl::trace (null when tracing is off or the allocation failed:
  // the trace is optional and never fails a communicator).
  std::uint64_t* start(int rank, int workers);
  // Writes the recorded launches (one line per launch and CTA) and frees the words.
  void finish();

 private:
  std::uint64_t* words_ = nullptr;
  int rank_ = 0;
  int workers_ = 0;
  std::string file_;
};

}  // namespace purlin::runtime
