#include "base/log.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>

namespace purlin::log {
namespace {

template <typename T>
struct Named {
  const char* name;
  T value;
};

constexpr Named<Level> kLevels[] = {
    {"NONE", Level::kNone}, {"VERSION", Level::kVersion}, {"WARN", Level::kWarn},
    {"INFO", Level::kInfo}, {"ABORT", Level::kAbort},     {"TRACE", Level::kTrace},
};

constexpr Named<Subsys> kSubsystems[] = {
    {"INIT", Subsys::kInit},     {"COLL", Subsys::kColl},       {"P2P", Subsys::kP2p},
    {"SHM", Subsys::kShm},       {"NET", Subsys::kNet},         {"GRAPH", Subsys::kGraph},
    {"TUNING", Subsys::kTuning}, {"ENV", Subsys::kEnv},         {"ALLOC", Subsys::kAlloc},
    {"CALL", Subsys::kCall},     {"PROXY", Subsys::kProxy},     {"NVLS", Subsys::kNvls},
    {"BOOTSTRAP", Subsys::kBootstrap}, {"REG", Subsys::kReg},   {"PROFILE", Subsys::kProfile},
    {"RAS", Subsys::kRas},       {"ALL", Subsys::kAll},
};

// NCCL's default: what a plain NCCL_DEBUG=INFO shows.
constexpr std::uint64_t kDefaultMask = static_cast<std::uint64_t>(Subsys::kInit) |
                                       static_cast<std::uint64_t>(Subsys::kBootstrap) |
                                       static_cast<std::uint64_t>(Subsys::kEnv);

// The variable's value, nullptr when unset or empty. Read directly, not through base/env,
// which logs what it reads: the log cannot log while it reads its own settings.
const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// Level by name, case-insensitively as NCCL; nullptr when unset or unknown.
const Level* parse_level(const char* s) {
  if (s == nullptr) return nullptr;
  for (const auto& l : kLevels)
    if (strcasecmp(s, l.name) == 0) return &l.value;
  return nullptr;
}

// NCCL's rule: a comma list of names; a leading '^' turns the whole list into exclusions
// (NCCL takes "^" only there: "INIT,^ENV" selects INIT). Unknown names select nothing.
std::uint64_t parse_subsys(const char* s) {
  if (s == nullptr) return kDefaultMask;
  const bool invert = *s == '^';
  if (invert) ++s;
  std::uint64_t listed = 0;
  const std::string list(s);
  for (size_t begin = 0; begin <= list.size();) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(begin, end - begin);
    for (const auto& n : kSubsystems)
      if (strcasecmp(name.c_str(), n.name) == 0) listed |= static_cast<std::uint64_t>(n.value);
    begin = end + 1;
  }
  return invert ? ~listed : listed;
}

// The short host name as NCCL writes it: up to the first '.', with '%' and '/' (which
// would upset a file name) as '-'.
std::string host_name() {
  char host[256] = "";
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown";
  std::string out(host);
  out = out.substr(0, out.find('.'));
  for (char& c : out)
    if (c == '%' || c == '/') c = '-';
  return out;
}

// NCCL_DEBUG_FILE's pattern: %h host, %p pid, %% a percent sign; any other %x stays as is.
std::string expand_path(const char* pattern, const std::string& host) {
  std::string out;
  for (const char* p = pattern; *p != '\0'; ++p) {
    if (*p != '%' || p[1] == '\0') {
      out += *p;
      continue;
    }
    switch (*++p) {
      case 'h': out += host; break;
      case 'p': out += std::to_string(getpid()); break;
      case '%': out += '%'; break;
      default: out += '%'; out += *p; break;
    }
  }
  return out;
}

// A fresh file as NCCL's "w", but in append mode: a real NCCL given the same NCCL_DEBUG_FILE
// writes it through a descriptor of its own, and appending keeps Purlin's lines from
// overwriting the real NCCL's (PURLIN_DEBUG_FILE keeps the two logs apart altogether).
// stderr when the file cannot be opened.
FILE* open_log_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return stderr;
  FILE* f = fdopen(fd, "a");
  if (f == nullptr) {
    ::close(fd);
    return stderr;
  }
  setlinebuf(f);
  return f;
}

struct Settings {
  Level level = Level::kWarn;
  Level requested = Level::kNone;  // what a variable asked for; kNone when none did
  std::uint64_t mask = kDefaultMask;
  std::string file_pattern;  // empty: stderr
};

// Warnings are on by default; PURLIN_DEBUG, when set, is authoritative (NONE silences);
// otherwise NCCL_DEBUG may raise the level, so existing NCCL habits keep working.
Settings read_settings() {
  Settings s;
  if (const char* purlin = env_value("PURLIN_DEBUG"); purlin != nullptr) {
    if (const Level* l = parse_level(purlin)) s.level = s.requested = *l;
  } else if (const Level* l = parse_level(env_value("NCCL_DEBUG"))) {
    s.requested = *l;
    if (static_cast<int>(*l) > static_cast<int>(s.level)) s.level = *l;
  }
  s.mask = parse_subsys(env_value("NCCL_DEBUG_SUBSYS"));
  const char* file = env_value("PURLIN_DEBUG_FILE");
  if (file == nullptr) file = env_value("NCCL_DEBUG_FILE");
  if (file != nullptr) s.file_pattern = file;
  return s;
}

// The state behind every line. Lines are written under the mutex, so that a reset cannot
// close the file under a writer and lines of concurrent threads never interleave.
struct Sink {
  std::mutex mu;
  std::atomic<int> level{-1};  // -1: the environment is not read yet
  std::atomic<std::uint64_t> mask{0};
  std::atomic<int> requested{0};
  FILE* file = stderr;
  std::string host;
  std::chrono::steady_clock::time_point epoch;

  // Called with `mu` held.
  void init() {
    if (file != stderr) std::fclose(file);
    file = stderr;
    const Settings s = read_settings();
    requested.store(static_cast<int>(s.requested), std::memory_order_relaxed);
    host = host_name();
    epoch = std::chrono::steady_clock::now();
    // As NCCL, no file for VERSION alone; one that cannot be opened leaves stderr.
    if (!s.file_pattern.empty() && static_cast<int>(s.level) > static_cast<int>(Level::kVersion))
      file = open_log_file(expand_path(s.file_pattern.c_str(), host));
    mask.store(s.mask, std::memory_order_relaxed);
    level.store(static_cast<int>(s.level), std::memory_order_release);
  }

  void ensure_init() {
    if (level.load(std::memory_order_acquire) >= 0) return;
    std::lock_guard<std::mutex> lock(mu);
    if (level.load(std::memory_order_acquire) < 0) init();
  }
};

Sink& sink() {
  static Sink* s = new Sink;  // never destroyed: threads may log during exit
  return *s;
}

std::atomic<DeviceQuery> g_device_query{nullptr};

int current_device() {
  const DeviceQuery q = g_device_query.load(std::memory_order_acquire);
  const int dev = q != nullptr ? q() : -1;
  return dev >= 0 ? dev : 0;  // NCCL prints 0 when cudaGetDevice fails
}

long thread_id() {
  thread_local const long tid = static_cast<long>(syscall(SYS_gettid));
  return tid;
}

const char* base_name(const char* file) {
  const char* slash = std::strrchr(file, '/');
  return slash != nullptr ? slash + 1 : file;
}

// NCCL's default NCCL_DEBUG_TIMESTAMP_FORMAT, which it puts on WARN lines only.
std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  return std::strftime(buf, sizeof(buf), "[%F %T] ", &tm) > 0 ? buf : "";
}

// How a line names its source: Purlin's own lines carry the tag, the version line does not
// (it reads "NCCL version ..." as NCCL's does).
enum class Tag : bool { kNone, kPurlin };

// Called with the sink's mutex held; `msg` is the caller's formatted text, `dev` the caller's
// CUDA device (asked before the lock: a CUDA call under it would serialize every thread).
void emit(Sink& s, Level l, Tag tag, int dev, const char* file, int line, const char* msg) {
  const std::string who = s.host + ":" + std::to_string(getpid()) + ":" + std::to_string(thread_id());
  const char* purlin = tag == Tag::kPurlin ? "Purlin: " : "";
  switch (l) {
    case Level::kWarn:
      // NCCL sets each warning apart with an empty line before it.
      std::fprintf(s.file, "\n%s%s [%d] %s:%d NCCL WARN %s%s\n", timestamp().c_str(), who.c_str(), dev,
                   base_name(file), line, purlin, msg);
      break;
    case Level::kInfo:
      std::fprintf(s.file, "%s [%d] NCCL INFO %s%s\n", who.c_str(), dev, purlin, msg);
      break;
    case Level::kTrace: {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s.epoch).count();
      std::fprintf(s.file, "%s [%d] %f %s:%d NCCL TRACE %s%s\n", who.c_str(), dev, ms, base_name(file), line,
                   purlin, msg);
      break;
    }
    default:  // VERSION: the bare message
      std::fprintf(s.file, "%s%s\n", purlin, msg);
      break;
  }
}

void vwrite(Level l, Tag tag, const char* file, int line, const char* fmt, va_list ap) {
  char msg[1024];
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  const int dev = current_device();
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  emit(s, l, tag, dev, file, line, msg);
}

}  // namespace

bool enabled(Level l, Subsys sub) {
  Sink& s = sink();
  s.ensure_init();
  if (s.level.load(std::memory_order_acquire) < static_cast<int>(l)) return false;
  return l == Level::kWarn || (s.mask.load(std::memory_order_relaxed) & static_cast<std::uint64_t>(sub)) != 0;
}

void write(Level l, Subsys sub, const char* file, int line, const char* fmt, ...) {
  if (!enabled(l, sub)) return;
  va_list ap;
  va_start(ap, fmt);
  vwrite(l, Tag::kPurlin, file, line, fmt, ap);
  va_end(ap);
}

namespace {

// How the version line prints: kNone when it does not.
Level version_as() {
  Sink& s = sink();
  s.ensure_init();
  if (enabled(Level::kInfo, Subsys::kAll)) return Level::kInfo;  // NCCL logs it under every subsystem
  const int requested = s.requested.load(std::memory_order_relaxed);
  if (requested == static_cast<int>(Level::kVersion) || requested == static_cast<int>(Level::kWarn))
    return Level::kVersion;
  return Level::kNone;
}

}  // namespace

bool version_enabled() { return version_as() != Level::kNone; }

void write_version(const char* fmt, ...) {
  const Level as = version_as();
  if (as == Level::kNone) return;
  va_list ap;
  va_start(ap, fmt);
  vwrite(as, Tag::kNone, "", 0, fmt, ap);
  va_end(ap);
}

void reset() {
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  s.init();
}

void set_device_query(DeviceQuery query) { g_device_query.store(query, std::memory_order_release); }

}  // namespace purlin::log
