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

// The times, in the order a worker passes them, then `group`, which holds the worker's role
// group instead of a time. A worker records only the points its role passes (0 elsewhere):
// `item` is where a stager starts its items, where a latency consumer issues the packet
// loads of its (last) share, and where a throughput consumer starts waiting for its (last)
// chunk's flags; `push`/`ready` a latency push before and after its release wait, `push`
// where a zero-copy stager has published its items (it then waits for its readers' acks),
// and `ready` where a throughput consumer saw its (last) chunk's flags and starts combining;
// `worked` the end of the role's own work (a consumer's confirmation of the producers'
// fingerprints lies between it and `done`). A point-to-point launch (pairs.h) records under
// its first transfer's pair sequence instead of an epoch: `item` where its sequence numbers
// are known, `push` where a packet send's slot is free, `ready` where a packet receive has
// all its packets, `worked` its transfers done, `exit` its sequences advanced, and in
// `group` the chunks it moved.
enum class TracePoint : std::uint32_t {
  entry,
  released,
  checked,
  item,
  push,
  ready,
  worked,
  done,
  exit,
  group,
  count
};

inline constexpr std::uint32_t kTracePoints = static_cast<std::uint32_t>(TracePoint::count);
inline constexpr std::uint32_t kTraceLaunches = 4;

// Column names of the trace file, by TracePoint.
inline constexpr const char* kTracePointNames[] = {"entry", "released", "checked", "item", "push",
                                                   "ready", "worked",   "done",    "exit", "group"};
static_assert(sizeof(kTracePointNames) / sizeof(kTracePointNames[0]) == kTracePoints);

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
