// Purlin's logging: one line per event on stderr, in NCCL's shape so that existing
// log scrapers keep working ("host:pid:tid [dev] Purlin WARN ...").
//
// Level: PURLIN_DEBUG=NONE|WARN|INFO|TRACE (default WARN). Without PURLIN_DEBUG,
// NCCL_DEBUG=INFO|TRACE raises the level too, because users of a drop-in library set the
// variable they already know.
#pragma once

#include <cstdarg>

namespace purlin::log {

enum class Level : int { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// The active level, read once from the environment (thread-safe).
Level level();
bool enabled(Level l);

// printf-style; the newline is added. Never throws, never exits.
void write(Level l, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// Re-reads the environment (ncclResetDebugInit).
void reset();

}  // namespace purlin::log

// These macros exist only to capture __FILE__/__LINE__ and skip argument evaluation
// when the level is off; they dispatch nothing.
#define PURLIN_WARN(...) ::purlin::log::write(::purlin::log::Level::kWarn, __FILE__, __LINE__, __VA_ARGS__)
#define PURLIN_INFO(...)                                                            \
  do {                                                                              \
    if (::purlin::log::enabled(::purlin::log::Level::kInfo))                        \
      ::purlin::log::write(::purlin::log::Level::kInfo, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define PURLIN_TRACE(...)                                                            \
  do {                                                                               \
    if (::purlin::log::enabled(::purlin::log::Level::kTrace))                        \
      ::purlin::log::write(::purlin::log::Level::kTrace, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
