#include "base/log.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace purlin::log {
namespace {

Level parse(const char* s) {
  if (s == nullptr) return Level::kNone;
  if (strcasecmp(s, "WARN") == 0) return Level::kWarn;
  if (strcasecmp(s, "INFO") == 0) return Level::kInfo;
  if (strcasecmp(s, "TRACE") == 0) return Level::kTrace;
  return Level::kNone;
}

Level from_env() {
  Level a = parse(std::getenv("PURLIN_DEBUG"));
  Level b = parse(std::getenv("NCCL_DEBUG"));
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

// -1: not read yet. Reading twice concurrently is harmless (same answer).
std::atomic<int> g_level{-1};

const char* name(Level l) {
  switch (l) {
    case Level::kWarn: return "WARN";
    case Level::kInfo: return "INFO";
    case Level::kTrace: return "TRACE";
    default: return "";
  }
}

}  // namespace

Level level() {
  int v = g_level.load(std::memory_order_acquire);
  if (v < 0) {
    v = static_cast<int>(from_env());
    g_level.store(v, std::memory_order_release);
  }
  return static_cast<Level>(v);
}

bool enabled(Level l) { return static_cast<int>(level()) >= static_cast<int>(l); }

void reset() { g_level.store(-1, std::memory_order_release); }

void write(Level l, const char* file, int line, const char* fmt, ...) {
  if (!enabled(l)) return;
  char host[64] = "?";
  gethostname(host, sizeof(host) - 1);
  if (char* dot = std::strchr(host, '.')) *dot = '\0';
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  // One fprintf call so lines from concurrent ranks do not interleave.
  std::fprintf(stderr, "%s:%d:%ld Purlin %s %s:%d %s\n", host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), name(l), base, line, msg);
}

}  // namespace purlin::log
