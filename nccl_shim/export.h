// Every exported ncclX is a weak alias of pncclX, as in NCCL: a profiler or a test can
// interpose ncclX and still reach Purlin through pncclX. GCC requires the alias target to
// be defined in the same translation unit, so each api_*.cc ends with its aliases.
#pragma once

#define PURLIN_WEAK_ALIAS_OF_P(name) __attribute__((weak, alias("p" #name)))
