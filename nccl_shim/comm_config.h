// Communicator configs (ncclConfig_t) of every NCCL version from 2.28 to 2.32: how Purlin
// reads the caller's struct, what its native path does with each field, and the struct it
// hands a real NCCL of another version.
//
// ncclConfig_t is versioned and append-only: size, magic and version lead every version, and
// each release may add fields at the end. NCCL reads min(size, its own sizeof) bytes and
// then resets every field newer than the caller's `version` to its default, so a struct
// from older headers means "unset" for everything it lacks. Purlin reads it the same way,
// from one table of fields (comm_config.cc) that also records what its native collectives
// do with each field.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/policy.h"

namespace purlin::shim {

// What Purlin's native collectives do with a field. Every field reaches a real NCCL whole
// (config_for_version) when calls are forwarded; this is only about the native path.
enum class NativeUse {
  kHonored,  // acted on natively, or its guarantee holds there by construction
  kIgnored,  // concerns machinery Purlin's native path does not have; warned once when set
  kForwarded,  // used only by calls that always run on the real NCCL, which receives it
};

struct ConfigField {
  enum class Kind { kInt, kString };
  const char* name;
  std::size_t offset;  // in ncclConfig_t (the 2.32 layout; earlier layouts are its prefixes)
  Kind kind;
  int since;           // NCCL_VERSION of the first release that reads the field
  NativeUse native;
  const char* why;     // how it is honored, or why the native path has nothing it could change
};

// The fields after size/magic/version, in layout order.
std::span<const ConfigField> config_fields();

// True when `field` of `cfg` holds a value (not NCCL_CONFIG_UNDEF_INT / _PTR).
bool field_is_set(const ncclConfig_t& cfg, const ConfigField& field);

// sizeof(ncclConfig_t) in the headers of NCCL `version` (80 for 2.28, 88 for 2.29, 96 for
// 2.30, 120 for 2.31 and 2.32); the newest layout Purlin knows for later versions.
std::size_t config_size_of(int version);

// Reads the caller's config as NCCL does (by size, then by version) and copies every field
// it sets over *cfg, which holds the defaults or, for split/shrink/grow, the parent's config.
// ncclInvalidArgument, with one WARN naming `fn`, for a struct NCCL_CONFIG_INITIALIZER did
// not make or a size no NCCL has. Values are not validated here.
ncclResult_t read_comm_config(const char* fn, const ncclConfig_t& user, ncclConfig_t* cfg);

// `cfg` as a struct of NCCL `version`'s headers: that version's size and version code, every
// field it knows; the bytes beyond its size hold the defaults. For a real NCCL newer than
// Purlin's headers, Purlin's own (newest) layout: that NCCL reads it as an older caller's.
ncclConfig_t config_for_version(const ncclConfig_t& cfg, int version);

// The CTA bounds of a native communicator created with `cfg` (defaults filled in, values
// validated): its minCTAs / maxCTAs under NCCL_MIN_CTAS / NCCL_MAX_CTAS, as in NCCL
// (policy::cta_bounds). Every launch of the communicator is planned within them.
policy::CtaBounds native_cta_bounds(const ncclConfig_t& cfg);

// One WARN per field (per instance, i.e. per process for process_warnings()) that `cfg` sets
// and the native path ignores, naming `fn`; returns the fields warned about by this call.
// A framework creates many communicators with the same config: one line per field tells
// the user without repeating it.
class IgnoredFieldWarnings {
 public:
  std::vector<const ConfigField*> warn(const char* fn, const ncclConfig_t& cfg);

 private:
  std::atomic<std::uint64_t> warned_{0};  // bit i: config_fields()[i]
};

IgnoredFieldWarnings& process_warnings();

}  // namespace purlin::shim
