#include "base/env.h"

#include <cerrno>
#include <cstdlib>

#include "base/log.h"

namespace purlin::env {

std::string get_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v == nullptr || *v == '\0') ? fallback : std::string(v);
}

int64_t get_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 0);
  if (errno != 0 || end == v || *end != '\0') {
    PURLIN_WARN("%s=%s is not an integer; using %lld", name, v, static_cast<long long>(fallback));
    return fallback;
  }
  return x;
}

}  // namespace purlin::env
