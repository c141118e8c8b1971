// Typed reads of Purlin's environment variables. Every variable Purlin reads is listed
// in README.md; reading them through here keeps parsing and error reporting uniform. The
// first read of a set NCCL_* or PURLIN_* variable logs NCCL's "NCCL_X set by environment to
// Y" line (INFO, subsystem ENV).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace purlin::env {

// The value of `name`, or `fallback` when unset or empty.
std::string get_string(const char* name, const std::string& fallback = "");

// Integer value; a malformed value logs one WARN and yields `fallback`.
int64_t get_int(const char* name, int64_t fallback);

// A count or duration that must be positive: a malformed or non-positive value logs one WARN and
// yields `fallback`; a value above `max` yields `max`.
int64_t get_positive_int(const char* name, int64_t fallback, int64_t max);

// Integer value, or nothing when unset, empty or malformed (one WARN): for a variable whose
// absence means something other than any value, such as NCCL's overrides of a config.
std::optional<int64_t> find_int(const char* name);

}  // namespace purlin::env
