// Argument validation shared by every entry point. Each check names the argument it
// rejects in its WARN line and returns ncclInvalidArgument or ncclInvalidUsage.
#pragma once

#include <nccl.h>

#include <cstddef>

#include "descriptor.h"

namespace purlin::shim {

// Bytes per element of a valid NCCL type; 0 for an invalid one.
size_t type_size(ncclDataType_t t);

ncclResult_t check_type(const char* fn, ncclDataType_t t);
ncclResult_t check_ptr(const char* fn, const char* name, const void* p);
ncclResult_t check_rank(const char* fn, const char* name, int value, int nranks);

// The communicator is ready, and type, op, root/peer, counts and buffers fit the call.
ncclResult_t check_descriptor(const Descriptor& d);

}  // namespace purlin::shim
