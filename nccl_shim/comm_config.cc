#include "comm_config.h"

#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "errors.h"

namespace purlin::shim {
namespace {

using Kind = ConfigField::Kind;
constexpr NativeUse kHonored = NativeUse::kHonored;
constexpr NativeUse kIgnored = NativeUse::kIgnored;
constexpr NativeUse kForwarded = NativeUse::kForwarded;

#define PURLIN_FIELD(name, kind) #name, offsetof(ncclConfig_t, name), kind

// `since` follows NCCL's parseCommConfig (init.cc, v2.30.7): the release below which it
// resets the field to its default. splitShare and commName it reads by size alone (0). The
// fields after graphStreamOrdering are dated 2.31.0 from the 2.32.3 headers, which tag their
// layout ncclConfig_v23100 (the last release that changed it); the v2.31 tag is not
// published in the NCCL repository to check against.
constexpr ConfigField kFields[] = {
    {PURLIN_FIELD(blocking, Kind::kInt), NCCL_VERSION(2, 14, 0), kHonored,
     "nonblocking creation returns ncclInProgress and finishes on a Purlin thread, as in NCCL"},
    {PURLIN_FIELD(cgaClusterSize, Kind::kInt), NCCL_VERSION(2, 17, 0), kIgnored,
     "Purlin's kernels launch without thread-block clusters"},
    {PURLIN_FIELD(minCTAs, Kind::kInt), NCCL_VERSION(2, 17, 0), kHonored,
     "every throughput launch takes at least this many CTAs, up to the co-residency budget (policy::bound_ctas); "
     "NCCL_MIN_CTAS overrides it, as in NCCL"},
    {PURLIN_FIELD(maxCTAs, Kind::kInt), NCCL_VERSION(2, 17, 0), kHonored,
     "every launch takes at most this many CTAs, at least 3 (policy::bound_ctas); NCCL_MAX_CTAS overrides it, "
     "as in NCCL"},
    {PURLIN_FIELD(netName, Kind::kString), NCCL_VERSION(2, 17, 0), kIgnored,
     "the native path stays on one host and loads no network plugin"},
    {PURLIN_FIELD(splitShare, Kind::kInt), 0, kIgnored,
     "each native communicator owns its device state, a split child shares none with its parent"},
    {PURLIN_FIELD(trafficClass, Kind::kInt), NCCL_VERSION(2, 25, 0), kIgnored,
     "a network QoS class; the native path uses no network"},
    {PURLIN_FIELD(commName, Kind::kString), 0, kHonored, "names the communicator in Purlin's log lines"},
    {PURLIN_FIELD(collnetEnable, Kind::kInt), NCCL_VERSION(2, 27, 0), kIgnored,
     "the native path has no CollNet (SHARP) algorithms"},
    {PURLIN_FIELD(CTAPolicy, Kind::kInt), NCCL_VERSION(2, 27, 0), kIgnored,
     "it chooses among NCCL's channel schedules; Purlin's policy table picks its workers"},
    {PURLIN_FIELD(shrinkShare, Kind::kInt), NCCL_VERSION(2, 27, 0), kIgnored,
     "each native communicator owns its device state, a shrunk child shares none with its parent"},
    {PURLIN_FIELD(nvlsCTAs, Kind::kInt), NCCL_VERSION(2, 27, 0), kIgnored,
     "the native collectives do not use NVLink SHARP"},
    {PURLIN_FIELD(nChannelsPerNetPeer, Kind::kInt), NCCL_VERSION(2, 28, 0), kIgnored,
     "the native path uses no network"},
    {PURLIN_FIELD(nvlinkCentricSched, Kind::kInt), NCCL_VERSION(2, 28, 0), kIgnored,
     "it tunes NCCL's channel scheduler, which the native path does not have"},
    {PURLIN_FIELD(graphUsageMode, Kind::kInt), NCCL_VERSION(2, 29, 0), kHonored,
     "native collectives are enqueued on the caller's stream only, never through an internal stream "
     "shared by eager and captured work, so what every mode promises holds"},
    {PURLIN_FIELD(numRmaCtx, Kind::kInt), NCCL_VERSION(2, 29, 0), kForwarded,
     "only one-sided calls use it, and they always run on the real NCCL"},
    {PURLIN_FIELD(maxP2pPeers, Kind::kInt), NCCL_VERSION(2, 30, 0), kIgnored,
     "it caps NCCL's point-to-point connections; the native path maps every peer at creation"},
    {PURLIN_FIELD(graphStreamOrdering, Kind::kInt), NCCL_VERSION(2, 30, 5), kIgnored,
     "it orders NCCL's internal streams in captured graphs; native collectives have none"},
    {PURLIN_FIELD(launchOrderImplicit, Kind::kInt), NCCL_VERSION(2, 31, 0), kIgnored,
     "native launches are ordered by the caller's streams alone"},
    {PURLIN_FIELD(numRmaSig, Kind::kInt), NCCL_VERSION(2, 31, 0), kForwarded,
     "only one-sided calls use it, and they always run on the real NCCL"},
    {PURLIN_FIELD(rmaEagerInit, Kind::kInt), NCCL_VERSION(2, 31, 0), kForwarded,
     "only one-sided calls use it, and they always run on the real NCCL"},
    {PURLIN_FIELD(hostCftMode, Kind::kInt), NCCL_VERSION(2, 31, 0), kIgnored,
     "it selects NCCL's host-side CFT machinery, which the native path does not have"},
    {PURLIN_FIELD(nvlsHostMode, Kind::kInt), NCCL_VERSION(2, 31, 0), kIgnored,
     "the native collectives do not use NVLink SHARP"},
};

#undef PURLIN_FIELD

constexpr std::size_t kFieldCount = sizeof(kFields) / sizeof(kFields[0]);
static_assert(kFieldCount <= 64, "IgnoredFieldWarnings keeps one bit per field");
static_assert(offsetof(ncclConfig_t, nvlsHostMode) + sizeof(int) <= sizeof(ncclConfig_t));

constexpr std::size_t width(Kind k) { return k == Kind::kInt ? sizeof(int) : sizeof(const char*); }

// The table covers the struct: the fields tile it from blocking to its end, in order.
constexpr bool fields_tile_the_struct() {
  std::size_t at = offsetof(ncclConfig_t, blocking);
  for (const ConfigField& f : kFields) {
    at = (at + width(f.kind) - 1) / width(f.kind) * width(f.kind);  // natural alignment
    if (f.offset != at) return false;
    at += width(f.kind);
  }
  return (at + alignof(ncclConfig_t) - 1) / alignof(ncclConfig_t) * alignof(ncclConfig_t) == sizeof(ncclConfig_t);
}
static_assert(fields_tile_the_struct(), "a field of ncclConfig_t is missing from kFields or out of order");

void copy_field(const ncclConfig_t& from, ncclConfig_t* to, const ConfigField& f) {
  std::memcpy(reinterpret_cast<char*>(to) + f.offset, reinterpret_cast<const char*>(&from) + f.offset, width(f.kind));
}

void reset_field(ncclConfig_t* cfg, const ConfigField& f) {
  static const ncclConfig_t kDefaults = NCCL_CONFIG_INITIALIZER;
  copy_field(kDefaults, cfg, f);
}

}  // namespace

std::span<const ConfigField> config_fields() { return kFields; }

bool field_is_set(const ncclConfig_t& cfg, const ConfigField& f) {
  const char* at = reinterpret_cast<const char*>(&cfg) + f.offset;
  if (f.kind == Kind::kInt) {
    int v;
    std::memcpy(&v, at, sizeof(v));
    return v != NCCL_CONFIG_UNDEF_INT;
  }
  const char* p;
  std::memcpy(&p, at, sizeof(p));
  return p != NCCL_CONFIG_UNDEF_PTR;
}

std::size_t config_size_of(int version) {
  std::size_t end = offsetof(ncclConfig_t, blocking);
  for (const ConfigField& f : kFields)
    if (f.since <= version) end = std::max(end, f.offset + width(f.kind));
  return (end + alignof(ncclConfig_t) - 1) / alignof(ncclConfig_t) * alignof(ncclConfig_t);
}

ncclResult_t read_comm_config(const char* fn, const ncclConfig_t& user, ncclConfig_t* cfg) {
  // size, magic and version lead every version of the struct.
  if (user.magic != NCCL_API_MAGIC)
    return fail(ncclInvalidArgument, fn, "config was not initialized with NCCL_CONFIG_INITIALIZER (magic 0x%x)",
                user.magic);
  // The oldest layout that leads with size/magic/version/blocking (2.14) up to a generous
  // bound past the newest: NCCL reads any larger size as its own, but a size this far off is
  // not a config.
  if (user.size < offsetof(ncclConfig_t, blocking) + sizeof(int) || user.size > sizeof(ncclConfig_t) * 4)
    return fail(ncclInvalidArgument, fn, "config->size %zu is not a known ncclConfig_t size", user.size);
  ncclConfig_t in = NCCL_CONFIG_INITIALIZER;
  std::memcpy(static_cast<void*>(&in), &user, std::min(user.size, sizeof(ncclConfig_t)));
  for (const ConfigField& f : kFields) {
    if (f.since > static_cast<int>(in.version)) reset_field(&in, f);
    if (field_is_set(in, f)) copy_field(in, cfg, f);
  }
  return ncclSuccess;
}

ncclConfig_t config_for_version(const ncclConfig_t& cfg, int version) {
  ncclConfig_t out = NCCL_CONFIG_INITIALIZER;
  const int as = std::min(version, NCCL_VERSION_CODE);
  out.size = config_size_of(as);
  out.version = static_cast<unsigned int>(as);
  for (const ConfigField& f : kFields)
    if (f.since <= as) copy_field(cfg, &out, f);
  return out;
}

policy::CtaBounds native_cta_bounds(const ncclConfig_t& cfg) { return policy::cta_bounds(cfg.minCTAs, cfg.maxCTAs); }

std::vector<const ConfigField*> IgnoredFieldWarnings::warn(const char* fn, const ncclConfig_t& cfg) {
  std::vector<const ConfigField*> warned;
  for (std::size_t i = 0; i < kFieldCount; ++i) {
    const ConfigField& f = kFields[i];
    if (f.native != kIgnored || !field_is_set(cfg, f)) continue;
    const std::uint64_t bit = std::uint64_t{1} << i;
    if ((warned_.fetch_or(bit, std::memory_order_relaxed) & bit) != 0) continue;
    warned.push_back(&f);
    PURLIN_WARN("%s: config->%s set but ignored by Purlin's native collectives: %s (calls forwarded to the "
                "real NCCL get it; warned once per process)",
                fn, f.name, f.why);
  }
  return warned;
}

IgnoredFieldWarnings& process_warnings() {
  static IgnoredFieldWarnings warnings;
  return warnings;
}

}  // namespace purlin::shim
