#include "base/env.h"

#include <cerrno>
#include <cstdlib>

#include "base/log.h"

namespace purlin::env {
namespace {

// The whole of `text` as an integer, or nothing (trailing characters, out of range).
std::optional<int64_t> parse_int(const char* text) {
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') return std::nullopt;
  return x;
}

}  // namespace

std::string get_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v == nullptr || *v == '\0') ? fallback : std::string(v);
}

int64_t get_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const std::optional<int64_t> x = parse_int(v);
  if (!x) PURLIN_WARN("%s=%s is not an integer; using %lld", name, v, static_cast<long long>(fallback));
  return x.value_or(fallback);
}

std::optional<int64_t> find_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  const std::optional<int64_t> x = parse_int(v);
  if (!x) PURLIN_WARN("%s=%s is not an integer; ignored", name, v);
  return x;
}

}  // namespace purlin::env
