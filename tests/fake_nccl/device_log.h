// What the fake's device-API files share: logging a team and marking an output requirement.
#pragma once

#include <cstring>
#include <string>

#include "nccl_api.h"
#include "recorder.h"

namespace fake_nccl {

inline void log_team(Call& c, const char* key, ncclTeam_t t) {
  std::string k = key;
  c.num((k + ".nRanks").c_str(), t.nRanks).num((k + ".rank").c_str(), t.rank);
  c.num((k + ".stride").c_str(), t.stride);
}

// Marks an output requirement so that its origin is recognizable.
inline void fill_requirement(ncclDevResourceRequirements_t* req, size_t bytes, int signals) {
  std::memset(req, 0, sizeof(*req));
  req->bufferSize = bytes;
  req->bufferAlign = 4096;
  req->ginSignalCount = signals;
}

}  // namespace fake_nccl
