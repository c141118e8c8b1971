// A record of device-memory ranges that users handed to Purlin (ncclMemAlloc,
// ncclCommRegister, ncclCommWindowRegister). The zero-copy path consults it to decide
// whether an application buffer is already peer-visible and staging can be skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace purlin::runtime {

enum class RangeKind : uint8_t {
  kAllocation,    // returned by ncclMemAlloc
  kRegistration,  // ncclCommRegister (local)
  kWindow,        // ncclCommWindowRegister (collective, symmetric)
};

struct Range {
  const void* base = nullptr;
  size_t bytes = 0;
  RangeKind kind = RangeKind::kAllocation;
  const void* key = nullptr;  // the handle the user got back; unique per registry
  bool external = false;      // allocated/registered through another library (the real NCCL)
  bool contains(const void* p, size_t n) const {
    auto b = reinterpret_cast<uintptr_t>(base), q = reinterpret_cast<uintptr_t>(p);
    return q >= b && n <= bytes && q - b <= bytes - n;
  }
};

// Thread-safe. Lookups are linear: registrations are few (tens) and lookups happen once
// per call, not per byte; revisit with an interval map if that changes.
class MemoryRegistry {
 public:
  void add(const Range& r);
  // Removes the range registered under `key`; returns it, or nothing if unknown.
  std::optional<Range> remove(const void* key);
  std::optional<Range> find_key(const void* key) const;
  // The registered range that wholly contains [p, p+n), if any.
  std::optional<Range> find_containing(const void* p, size_t n) const;
  size_t size() const;
  std::vector<Range> snapshot() const;

 private:
  mutable std::mutex mu_;
  std::vector<Range> ranges_;
};

}  // namespace purlin::runtime
