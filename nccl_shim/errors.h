// How the shim reports failure across the C ABI: a result code, one WARN line that names
// the entry point and the offending argument, and the same text for ncclGetLastError.
#pragma once

#include <nccl.h>

#include <exception>
#include <new>

namespace purlin::shim {

ncclResult_t fail(ncclResult_t code, const char* fn, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// The last failure text recorded on this thread ("" when none).
const char* last_error();

// Runs an entry point's body so that no C++ exception crosses the C ABI.
template <class Body>
ncclResult_t guarded(const char* fn, Body&& body) noexcept {
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

}  // namespace purlin::shim
