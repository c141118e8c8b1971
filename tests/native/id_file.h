// A communicator's unique id passed between the processes of one test run through a file: rank 0
// publishes it, the others wait for it (tests/integration/run_mps.sh, run_peer_death.sh).
#pragma once

#include <nccl.h>

#include <string>

namespace purlin::native_test {

// The longest a rank waits for rank 0's id.
inline constexpr int kIdWaitSeconds = 60;

// Written to a temporary name and renamed, so a reader never sees a partial id.
bool publish_id(const std::string& path, const ncclUniqueId& id);

// Waits up to kIdWaitSeconds for the id at `path`; false when none came.
bool read_id(const std::string& path, ncclUniqueId* id);

}  // namespace purlin::native_test
