// ncclDevCommRequirements in the layout the real NCCL reads. Two families exist:
//   2.28 (2.28.7-2.28.9): no header, resourceRequirementsList first, 56 bytes;
//   2.29 on: size/magic/version first, then 2.28's fields, then each release's additions.
// Purlin compiles against the newest headers, so ncclDevCommCreate may receive either, and
// the real NCCL it forwards to may read either.
//
// NCCL 2.29+ copies `size` bytes (it does not clamp them to its own struct) and, from
// `version`, picks the ncclDevComm layout it writes back for the caller's device code; it
// refuses a version newer than itself or older than 2.29.2. So the forwarded struct keeps the
// caller's version, has its size cut to what the real NCCL's layout holds, and a 2.28
// caller's fields get the header. A real 2.28 NCCL has no version check, so Purlin makes the
// one it lacks: a header-layout caller's device code reads a newer ncclDevComm than 2.28
// writes, and is refused.
#pragma once

#include <nccl.h>
#include <nccl_device.h>

#include <cstddef>

namespace purlin::shim {

// NCCL 2.28.7-2.28.9's struct (nccl_device/core.h at v2.28.9-1).
struct DevCommRequirements228 {
  ncclDevResourceRequirements_t* resourceRequirementsList;
  ncclTeamRequirements_t* teamRequirementsList;
  bool lsaMultimem;
  int barrierCount;
  int lsaBarrierCount;
  int railGinBarrierCount;
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount;
  bool ginForceEnable;
  int ginContextCount;
  int ginSignalCount;
  int ginCounterCount;
};

// The version a headerless (2.28) struct is forwarded as.
inline constexpr int kHeaderless228Version = NCCL_VERSION(2, 28, 9);

// sizeof(ncclDevCommRequirements_t) in NCCL `version`'s headers (56 for 2.28, headerless; 72,
// 88, 96 and 120 from 2.29.2 to 2.32); for an untagged release, the newest layout before it,
// which it reads as an older caller's.
std::size_t requirements_size_of(int version);

// `user` (either layout) rewritten for a real NCCL of `real_version` into storage that
// outlives the forwarded call.
class RealRequirements {
 public:
  // ncclInvalidArgument for a header-layout struct that NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER
  // did not make; ncclInvalidUsage for a header-layout caller and a real NCCL 2.28. One WARN
  // naming `fn` each.
  ncclResult_t build(const char* fn, const void* user, int real_version);
  const ncclDevCommRequirements_t* get() const { return &storage_; }

 private:
  ncclDevCommRequirements_t storage_{};  // a DevCommRequirements228 at its start for a 2.28 NCCL
};

}  // namespace purlin::shim
