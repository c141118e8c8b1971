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

// Unset or unknown values yield `fallback`.
Level parse(const char* s, Level fallback) {
  if (s == nullptr || *s == '\0') return fallback;
  if (strcasecmp(s, "NONE") == 0) return Level::kNone;
  if (strcasecmp(s, "WARN") == 0) return Level::kWarn;
  if (strcasecmp(s, "INFO") == 0) return Level::kInfo;
  if (strcasecmp(s, "TRACE") == 0) return Level::kTrace;
  return fallback;
}

// Warnings are on by default: a rejected argument or a missing real NCCL must be
// visible without any setting. PURLIN_DEBUG, when set, is authoritative (NONE silences);
// otherwise NCCL_DEBUG may raise the level, so existing NCCL habits keep working.
Level from_env() {
  const char* purlin = std::getenv("PURLIN_DEBUG");
  if (purlin != nullptr && *purlin != '\0') return parse(purlin, Level::kWarn);
  Level nccl = parse(std::getenv("NCCL_DEBUG"), Level::kWarn);
  return static_cast<int>(nccl) >= static_cast<int>(Level::kWarn) ? nccl : Level::kWarn;
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
