#include "errors.h"

#include <cstdarg>
#include <cstdio>

#include "base/log.h"

namespace purlin::shim {
namespace {
thread_local char t_last_error[1024] = "";
}

ncclResult_t fail(ncclResult_t code, const char* fn, const char* fmt, ...) {
  char msg[960];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  std::snprintf(t_last_error, sizeof(t_last_error), "%s: %s", fn, msg);
  PURLIN_WARN("%s", t_last_error);
  return code;
}

void record_error(const char* fn, const char* text) {
  std::snprintf(t_last_error, sizeof(t_last_error), "%s: %s", fn, text);
}

const char* last_error() { return t_last_error; }

}  // namespace purlin::shim
