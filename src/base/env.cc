#include "base/env.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

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

// The value of a set variable, after NCCL's "NCCL_X set by environment to Y" line (INFO,
// ENV) the first time a Purlin or NCCL variable is read; others (LD_LIBRARY_PATH, CUDA_HOME)
// are not settings and go unlogged. nullptr when unset or empty.
const char* read(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return nullptr;
  if (std::strncmp(name, "NCCL_", 5) != 0 && std::strncmp(name, "PURLIN_", 7) != 0) return v;
  if (!log::enabled(log::Level::kInfo, log::Subsys::kEnv)) return v;
  static std::mutex mu;
  static auto* logged = new std::set<std::string>;  // never destroyed: read during exit too
  bool first;
  {
    std::lock_guard<std::mutex> lock(mu);
    first = logged->insert(name).second;
  }
  if (first) PURLIN_INFO(kEnv, "%s set by environment to %s", name, v);
  return v;
}

}  // namespace

std::string get_string(const char* name, const std::string& fallback) {
  const char* v = read(name);
  return v == nullptr ? fallback : std::string(v);
}

int64_t get_int(const char* name, int64_t fallback) {
  const char* v = read(name);
  if (v == nullptr) return fallback;
  const std::optional<int64_t> x = parse_int(v);
  if (!x) PURLIN_WARN("%s=%s is not an integer; using %lld", name, v, static_cast<long long>(fallback));
  return x.value_or(fallback);
}

int64_t get_positive_int(const char* name, int64_t fallback, int64_t max) {
  const int64_t x = get_int(name, fallback);
  if (x <= 0) {
    PURLIN_WARN("%s=%lld is not positive; using %lld", name, static_cast<long long>(x),
                static_cast<long long>(fallback));
    return fallback;
  }
  return x < max ? x : max;
}

std::optional<int64_t> find_int(const char* name) {
  const char* v = read(name);
  if (v == nullptr) return std::nullopt;
  const std::optional<int64_t> x = parse_int(v);
  if (!x) PURLIN_WARN("%s=%s is not an integer; ignored", name, v);
  return x;
}

}  // namespace purlin::env
