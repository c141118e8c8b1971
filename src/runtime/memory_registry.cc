#include "runtime/memory_registry.h"

#include <algorithm>

namespace purlin::runtime {

void MemoryRegistry::add(const Range& r) {
  std::lock_guard<std::mutex> lock(mu_);
  ranges_.push_back(r);
}

std::optional<Range> MemoryRegistry::remove(const void* key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find_if(ranges_.begin(), ranges_.end(), [&](const Range& r) { return r.key == key; });
  if (it == ranges_.end()) return std::nullopt;
  Range r = *it;
  ranges_.erase(it);
  return r;
}

std::optional<Range> MemoryRegistry::find_key(const void* key) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Range& r : ranges_)
    if (r.key == key) return r;
  return std::nullopt;
}

std::optional<Range> MemoryRegistry::find_containing(const void* p, size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Range& r : ranges_)
    if (r.contains(p, n)) return r;
  return std::nullopt;
}

size_t MemoryRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ranges_.size();
}

std::vector<Range> MemoryRegistry::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ranges_;
}

}  // namespace purlin::runtime
