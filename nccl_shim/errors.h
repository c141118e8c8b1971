// How the shim reports failure across the C ABI: a result code, one WARN line that names
// the entry point and the offending argument, and the same text for ncclGetLastError.
#pragma once

#include <nccl.h>

#include <exception>
#include <new>

#include "base/fault.h"

namespace purlin::shim {

ncclResult_t fail(ncclResult_t code, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Records "fn: text" as this thread's last failure without a WARN: for a failure that another
// thread found and reported, which this thread's caller now meets (ncclGetLastError).
void record_error(const char* fn, const char* text);
// The last failure text recorded on this thread ("" when none).
const char* last_error();

// Runs `body` so that no C++ exception leaves it: std::bad_alloc becomes ncclSystemError,
// anything else ncclInternalError, each with one WARN naming `fn`. For entry points use
// guarded(); thread bodies use it directly (threads.h).
template <class Body>
ncclResult_t contain_exceptions(const char* fn, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(ncclSystemError, fn, "out of host memory");
  } catch (const std::exception& e) {
    return fail(ncclInternalError, fn, "internal error: %s", e.what());
  } catch (...) {
    return fail(ncclInternalError, fn, "internal error: unknown exception");
  }
}

// The body of every exported function runs in here, so that no exception crosses the C ABI.
// Its first step is the fault-injection site "entry" (base/fault.h): a test arms it to fail
// each exported function in turn and so proves that each one has its guard.
template <class Body>
ncclResult_t guarded(const char* fn, Body&& body) noexcept {
  return contain_exceptions(fn, [&] {
    fault::point("entry");
    return body();
  });
}

// guarded() for the exported functions that return a value instead of a status (teams, slot
// counts, strings): an exception yields `failure`, the value the function documents for
// failure, after the one WARN. The body reports its own failures the same way.
template <class T, class Body>
T guarded_value(const char* fn, T failure, Body&& body) noexcept {
  T out = failure;
  (void)guarded(fn, [&] {
    out = body();
    return ncclSuccess;
  });
  return out;
}

}  // namespace purlin::shim
