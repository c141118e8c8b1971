// Fault injection, for tests: makes one chosen site of the library throw, so that a test can
// prove that what a real failure throws there (an allocation, a library call, a thread that
// cannot start) comes back as an error code and one WARN line, instead of crossing the C ABI
// or reaching std::terminate.
//
// PURLIN_FAULT_INJECT=<site> fails every passage through <site>; <site>:<N> only the Nth,
// counted from when the setting was read. It is read at the first passage through any site
// and again by reload() (ncclResetDebugInit, which re-reads NCCL's and Purlin's debug
// settings), which is how one test process arms one site after another. The sites are the
// names passed to point() and allocation(); README.md lists them.
//
// Unset, a site costs one relaxed atomic load: the switch is compiled into every build, so
// the tests exercise the library that ships.
#pragma once

#include <atomic>
#include <stdexcept>

namespace purlin::fault {

// What an armed point() throws: an internal error, as a failing library call or a broken
// invariant would be.
class Injected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// True until the setting has been read (so that the first passage reads it), then true
// only while a site is armed.
inline std::atomic<bool> check_sites{true};
// Throws when `site` is the armed one and this passage is the chosen one.
void passage(const char* site, bool allocation);
}  // namespace detail

// A site whose failure is an exception of the library's own making (Injected).
inline void point(const char* site) {
  if (detail::check_sites.load(std::memory_order_relaxed)) [[unlikely]]
    detail::passage(site, false);
}

// A site that allocates: armed, it throws std::bad_alloc, as the allocation would.
inline void allocation(const char* site) {
  if (detail::check_sites.load(std::memory_order_relaxed)) [[unlikely]]
    detail::passage(site, true);
}

// Arms `spec` (the grammar of PURLIN_FAULT_INJECT; null or "" disarms). A malformed spec
// disarms with one WARN. Tests that link the base library call it directly.
void arm(const char* spec);

// arm(PURLIN_FAULT_INJECT), read now.
void reload();

}  // namespace purlin::fault
