// The threads the shim starts: init jobs (group.h) and the background of a nonblocking group.
//
// An exception that leaves a std::thread's body calls std::terminate and would end the
// application, so every body runs through contain_exceptions, as an entry point's does: it
// becomes a result code with one WARN naming the entry point that started the thread.
// Starting a thread can fail too (std::system_error when the process has no threads left);
// that failure is reported the same way, to the same place.
#pragma once

#include <nccl.h>

#include <thread>
#include <utility>

#include "base/fault.h"
#include "errors.h"

namespace purlin::shim {

// Starts `body` (no arguments, returns nothing: it delivers its own result) on *thread. When
// the body cannot run to its end, because it throws or the thread cannot start, `failed`
// receives the failure, after its one WARN naming `fn`: on the new thread, or on the caller's
// when the thread could not start (*thread then stays unjoinable and the failure is returned).
// `failed` runs only then: a body that returned may have handed its objects back to the
// application, which may have freed them. `fn` must outlive the thread (a string literal);
// `failed` must not throw.
//
// Fault-injection sites (base/fault.h): "thread_start" fails the start, "thread" the body.
template <class Body, class Failed>
ncclResult_t start_thread(const char* fn, std::thread* thread, Body body, Failed failed) noexcept {
  const ncclResult_t started = contain_exceptions(fn, [&] {
    fault::point("thread_start");
    *thread = std::thread([fn, body = std::move(body), failed]() mutable noexcept {
      const ncclResult_t r = contain_exceptions(fn, [&] {
        fault::point("thread");
        body();
        return ncclSuccess;
      });
      if (r != ncclSuccess) failed(r);
    });
    return ncclSuccess;
  });
  if (started != ncclSuccess) failed(started);
  return started;
}

}  // namespace purlin::shim
