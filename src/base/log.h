// Purlin's logging, in NCCL's conventions, so that whatever reads NCCL's logs (people,
// scripts grepping "NCCL WARN" / "NCCL INFO") reads Purlin's lines too. Each message starts
// with "Purlin: ", which tells Purlin's lines from those of the real NCCL it forwards to
// (both write the same shape, often to the same stream):
//
//   <empty line>
//   [2026-12-04 18:39:57] host:pid:tid [cudaDev] file.cc:123 NCCL WARN Purlin: msg
//   host:pid:tid [cudaDev] NCCL INFO Purlin: msg
//   host:pid:tid [cudaDev] 12.345678 file.cc:123 NCCL TRACE Purlin: msg   (ms since the log began)
//
// The cudaDev is the calling thread's current CUDA device, 0 when it is unknown (as NCCL).
// The WARN timestamp is NCCL's default; NCCL_DEBUG_TIMESTAMP_* are not read.
//
// Level: PURLIN_DEBUG, when set, is authoritative; otherwise NCCL_DEBUG may raise the level
// above Purlin's default, WARN (NCCL's default is NONE, but a refused argument or a missing
// real NCCL must be visible without any setting). Names as NCCL's: NONE, VERSION, WARN,
// INFO, ABORT, TRACE, each printing everything less verbose than itself.
// Subsystems: NCCL_DEBUG_SUBSYS filters INFO and TRACE lines (WARNs always print).
// Output: PURLIN_DEBUG_FILE, else NCCL_DEBUG_FILE (%h host, %p pid), else stderr.
#pragma once

#include <cstdarg>
#include <cstdint>

namespace purlin::log {

// NCCL's values (ncclDebugLogLevel), so that a level reads the same in both libraries.
enum class Level : int { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kAbort = 4, kTrace = 5 };

// NCCL's subsystem bits (ncclDebugLogSubSys), all of them, so that NCCL_DEBUG_SUBSYS means
// the same mask in both libraries; Purlin logs under a few (INIT, P2P, GRAPH, ALLOC,
// BOOTSTRAP), and a call site names its own.
enum class Subsys : std::uint64_t {
  kInit = 0x1,
  kColl = 0x2,
  kP2p = 0x4,
  kShm = 0x8,
  kNet = 0x10,
  kGraph = 0x20,  // topology: hwloc, PCI
  kTuning = 0x40,
  kEnv = 0x80,
  kAlloc = 0x100,
  kCall = 0x200,
  kProxy = 0x400,
  kNvls = 0x800,
  kBootstrap = 0x1000,
  kReg = 0x2000,
  kProfile = 0x4000,
  kRas = 0x8000,
  kAll = ~std::uint64_t{0},
};

// Whether a line of this level and subsystem would print; reads the environment on first
// use (thread-safe).
bool enabled(Level l, Subsys s = Subsys::kAll);

// printf-style; the newline is added. Never throws, never exits.
void write(Level l, Subsys s, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

// The version line, which names NCCL's version first ("NCCL version ...") for the tools that
// look for it. NCCL prints it bare (no prefix) when NCCL_DEBUG is VERSION or WARN, as an
// INFO line at INFO and above, and not at all when unset; Purlin follows that, so its
// default WARN level alone prints no version line.
void write_version(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Whether write_version would print, for callers whose version text costs something.
bool version_enabled();

// Re-reads the environment and reopens the debug file (ncclResetDebugInit).
void reset();

// The calling thread's current CUDA device, or a negative value when unknown. The base
// layer does not link CUDA; the library registers the query once at load.
using DeviceQuery = int (*)();
void set_device_query(DeviceQuery query);

}  // namespace purlin::log

// These macros exist only to capture __FILE__/__LINE__ and skip argument evaluation when
// the line would not print; they dispatch nothing. INFO and TRACE name their subsystem
// without its scope: PURLIN_INFO(kBootstrap, "...").
#define PURLIN_WARN(...)                                                                             \
  ::purlin::log::write(::purlin::log::Level::kWarn, ::purlin::log::Subsys::kAll, __FILE__, __LINE__, \
                       __VA_ARGS__)
#define PURLIN_INFO(subsys, ...)                                                                 \
  do {                                                                                           \
    if (::purlin::log::enabled(::purlin::log::Level::kInfo, ::purlin::log::Subsys::subsys))      \
      ::purlin::log::write(::purlin::log::Level::kInfo, ::purlin::log::Subsys::subsys, __FILE__, \
                           __LINE__, __VA_ARGS__);                                               \
  } while (0)
#define PURLIN_TRACE(subsys, ...)                                                                 \
  do {                                                                                            \
    if (::purlin::log::enabled(::purlin::log::Level::kTrace, ::purlin::log::Subsys::subsys))      \
      ::purlin::log::write(::purlin::log::Level::kTrace, ::purlin::log::Subsys::subsys, __FILE__, \
                           __LINE__, __VA_ARGS__);                                                \
  } while (0)
