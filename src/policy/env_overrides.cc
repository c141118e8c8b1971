// The environment's overrides of the table (policy.h lists the variables). A value that does
// not parse or is out of range is reported once and ignored, so a typo never silently turns
// into a zero chunk or an empty role group.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "policy/policy.h"

namespace purlin::policy {
namespace {

constexpr int kMaxWorkers = 1024;  // more CTAs than any GPU has SMs: surely a typo

// A size (bytes, slots) from `name`, kept in `value` unless set, an integer, and >= `min`.
void override_size(const char* name, std::int64_t min, std::size_t& value) {
  // A malformed value comes back as the fallback, with get_int's WARN.
  const std::int64_t v = env::get_int(name, static_cast<std::int64_t>(value));
  if (v < min) {
    PURLIN_WARN("%s=%lld: must be at least %lld; keeping %zu", name, static_cast<long long>(v),
                static_cast<long long>(min), value);
    return;
  }
  value = static_cast<std::size_t>(v);
}

// A switch from `name`: 0 or 1, anything else reported and ignored.
void override_switch(const char* name, bool& value) {
  const std::int64_t v = env::get_int(name, value ? 1 : 0);
  if (v != 0 && v != 1) {
    PURLIN_WARN("%s=%lld: must be 0 or 1; keeping %d", name, static_cast<long long>(v),
                value ? 1 : 0);
    return;
  }
  value = v == 1;
}

// True when `name` set valid roles.
bool override_roles(const char* name, snac::Roles& roles) {
  const std::string text = env::get_string(name);
  if (text.empty()) return false;
  if (const auto parsed = parse_roles(text)) {
    roles = *parsed;
    return true;
  }
  PURLIN_WARN(
      "%s=%s: expected \"stagers,consumers,finishers[,team]\", each >= 1, groups multiples of "
      "team, at most %d in all; keeping %d,%d,%d,%d",
      name, text.c_str(), kMaxWorkers, roles.stagers, roles.consumers, roles.finishers,
      roles.team);
  return false;
}

// A CTA bound from NCCL's variable `name`, kept in `bound` unless set and >= 1. The name and
// that it overrides the config are NCCL's (init.cc: envConfigOverride); so is ignoring a
// value < 1, which NCCL reports at INFO and Purlin at WARN like its own variables.
void override_cta_bound(const char* name, int& bound) {
  const std::optional<std::int64_t> set = env::find_int(name);
  if (!set) return;
  const std::int64_t v = *set;
  if (v < 1) {
    PURLIN_WARN("%s=%lld: must be at least 1; keeping %d", name, static_cast<long long>(v), bound);
    return;
  }
  if (v > kMaxWorkers) {
    PURLIN_WARN("%s=%lld: more CTAs than any GPU has SMs; using %d", name, static_cast<long long>(v), kMaxWorkers);
  }
  bound = static_cast<int>(std::min<std::int64_t>(v, kMaxWorkers));
}

}  // namespace

std::optional<snac::Roles> parse_roles(std::string_view text) {
  int v[4] = {0, 0, 0, 1};
  int n = 0;
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  while (true) {
    if (n == 4) return std::nullopt;
    const auto [next, ec] = std::from_chars(p, end, v[n]);
    if (ec != std::errc() || next == p) return std::nullopt;
    ++n;
    p = next;
    if (p == end) break;
    if (*p != ',') return std::nullopt;
    ++p;
  }
  if (n < 3) return std::nullopt;
  const snac::Roles r{v[0], v[1], v[2], v[3]};
  if (r.team < 1 || r.stagers < 1 || r.consumers < 1 || r.finishers < 1) return std::nullopt;
  if (r.stagers % r.team != 0 || r.consumers % r.team != 0 || r.finishers % r.team != 0) {
    return std::nullopt;
  }
  if (static_cast<long long>(r.stagers) + r.consumers + r.finishers > kMaxWorkers) {
    return std::nullopt;
  }
  return r;
}

snac::Policy apply_env(snac::Policy p) {
  // 16 bytes: one packet, and the grain of a team member's share of a chunk (plan.h).
  override_size("PURLIN_CHUNK_BYTES", 16, p.chunk_bytes);
  override_size("PURLIN_PACKET_CHUNK_BYTES", 16, p.packet_chunk_bytes);
  override_size("PURLIN_LATENCY_MAX_BYTES", 0, p.latency_max_bytes);
  override_size("PURLIN_ONE_HOP_MAX_BYTES", 0, p.one_hop_max_bytes);
  override_size("PURLIN_RING_SLOTS", 1, p.min_ring_slots);
  override_size("PURLIN_SPREAD_MIN_BYTES", 16, p.spread_min_bytes);
  override_size("PURLIN_RANK_ROLES_MIN_BYTES", 0, p.rank_roles_min_bytes);
  override_switch("PURLIN_ZERO_COPY", p.zero_copy);
  override_switch("PURLIN_CHECK_CALLS", p.check_calls);
  override_switch("PURLIN_SHARE_ITEMS", p.share_items);
  override_switch("PURLIN_SPREAD_TEAMS", p.spread_teams);
  // Roles given explicitly are used as given, also where the table would balance a budget.
  if (override_roles("PURLIN_ROLES", p.throughput)) p.throughput_workers = 0;
  override_roles("PURLIN_LATENCY_ROLES", p.latency);
  return p;
}

CtaBounds cta_bounds(int config_min, int config_max) {
  // The shim refuses a config value < 1 as NCCL does, so here < 1 is unset. Above
  // kMaxWorkers a bound means nothing a GPU could launch.
  const auto from_config = [](int v) { return v < 1 ? 0 : std::min(v, kMaxWorkers); };
  CtaBounds b{from_config(config_min), from_config(config_max)};
  override_cta_bound("NCCL_MIN_CTAS", b.min);
  override_cta_bound("NCCL_MAX_CTAS", b.max);
  if (b.max > 0 && b.min > b.max) {
    // NCCL does the same after its environment override (init.cc: envConfigOverride).
    PURLIN_WARN("minCTAs %d is larger than maxCTAs %d (NCCL_MIN_CTAS / NCCL_MAX_CTAS override the config's); "
                "using %d for both",
                b.min, b.max, b.max);
    b.min = b.max;
  }
  return b;
}

}  // namespace purlin::policy
