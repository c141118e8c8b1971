// A launch timeline for profiling ranks that share a GPU, where ncu cannot replay one rank's
// kernel while its peers wait: with DeviceControl::trace set, thread 0 of every CTA writes the
// GPU's global timer at the engine's trace points of the latest kTraceLaunches launches (by
// epoch), which the runtime writes out when the communicator is destroyed (PURLIN_TRACE_FILE).
// Off (null), each point costs one predicated branch on a kernel parameter.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/host_device.h"
#include "snac/handle.h"

namespace purlin::snac {

// In the order a worker passes them. `group` holds the worker's role group, not a time.
enum class TracePoint : std::uint32_t { entry, released, group, push, ready, done, exit, count };

inline constexpr std::uint32_t kTracePoints = static_cast<std::uint32_t>(TracePoint::count);
inline constexpr std::uint32_t kTraceLaunches = 4;

// Word of (launch epoch, worker, point) in a trace of `workers` slots per launch.
PURLIN_HD constexpr std::size_t trace_index(Epoch epoch, int worker, int workers,
                                            TracePoint point) {
  return (static_cast<std::size_t>(epoch % kTraceLaunches) * static_cast<std::size_t>(workers) +
          static_cast<std::size_t>(worker)) *
             kTracePoints +
         static_cast<std::size_t>(point);
}

PURLIN_HD constexpr std::size_t trace_words(int workers) {
  return static_cast<std::size_t>(kTraceLaunches) * static_cast<std::size_t>(workers) *
         kTracePoints;
}

}  // namespace purlin::snac
