#include "base/fault.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "base/log.h"

namespace purlin::fault {
namespace {

// The armed site. Only passages while check_sites is set reach it, so the mutex costs
// nothing when fault injection is off.
struct Armed {
  std::mutex mu;
  bool read = false;   // the setting has been read (at the first passage, or by arm())
  char site[64] = {};  // "": nothing armed
  long nth = 0;        // 0: every passage fails
  long passages = 0;   // through `site` since it was armed
};

Armed& armed() {
  static auto* a = new Armed;  // never destroyed: threads may pass sites during exit
  return *a;
}

// "<site>" or "<site>:<N>", N >= 1.
bool parse(const char* spec, Armed* a) {
  const char* colon = std::strchr(spec, ':');
  const size_t len = colon != nullptr ? static_cast<size_t>(colon - spec) : std::strlen(spec);
  if (len == 0 || len >= sizeof(a->site)) return false;
  long nth = 0;
  if (colon != nullptr) {
    errno = 0;
    char* end = nullptr;
    nth = std::strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || nth < 1) return false;
  }
  std::memcpy(a->site, spec, len);
  a->site[len] = '\0';
  a->nth = nth;
  return true;
}

void arm_locked(Armed& a, const char* spec) {
  a.read = true;
  a.site[0] = '\0';
  a.nth = 0;
  a.passages = 0;
  if (spec != nullptr && *spec != '\0') {
    if (!parse(spec, &a)) {
      a.site[0] = '\0';
      PURLIN_WARN("PURLIN_FAULT_INJECT=%s is not <site> or <site>:<N> (N >= 1); fault injection stays off", spec);
    } else {
      // INFO, not WARN: tests count the WARN lines of the calls they fail.
      PURLIN_INFO(kEnv, "fault injection armed at site '%s', %s", a.site,
                  a.nth == 0 ? "every passage" : ("passage " + std::to_string(a.nth)).c_str());
    }
  }
  detail::check_sites.store(a.site[0] != '\0', std::memory_order_relaxed);
}

}  // namespace

void detail::passage(const char* site, bool allocation) {
  Armed& a = armed();
  {
    std::lock_guard<std::mutex> lock(a.mu);
    if (!a.read) arm_locked(a, std::getenv("PURLIN_FAULT_INJECT"));
    if (a.site[0] == '\0' || std::strcmp(site, a.site) != 0) return;
    ++a.passages;
    if (a.nth != 0 && a.passages != a.nth) return;
  }
  if (allocation) throw std::bad_alloc();
  throw Injected(std::string("fault injected at site '") + site + "' (PURLIN_FAULT_INJECT)");
}

void arm(const char* spec) {
  Armed& a = armed();
  std::lock_guard<std::mutex> lock(a.mu);
  arm_locked(a, spec);
}

void reload() { arm(std::getenv("PURLIN_FAULT_INJECT")); }

}  // namespace purlin::fault
