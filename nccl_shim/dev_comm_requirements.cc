#include "dev_comm_requirements.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "errors.h"

namespace purlin::shim {
namespace {

constexpr std::size_t kHeader = offsetof(ncclDevCommRequirements_t, resourceRequirementsList);
static_assert(kHeader == 16);
static_assert(sizeof(DevCommRequirements228) == 56);
// From 2.29 on, 2.28's struct follows the header unchanged, so converting is one copy.
static_assert(offsetof(ncclDevCommRequirements_t, ginCounterCount) ==
              kHeader + offsetof(DevCommRequirements228, ginCounterCount));
static_assert(offsetof(ncclDevCommRequirements_t, lsaMultimem) == kHeader + offsetof(DevCommRequirements228, lsaMultimem));
constexpr std::size_t kBody228 = offsetof(DevCommRequirements228, ginCounterCount) + sizeof(int);

// Every tagged release that changed the layout (nccl_device/core.h at each v2.x.y-1 tag).
struct Layout {
  int since;
  std::size_t size;
};
constexpr Layout kLayouts[] = {
    {NCCL_VERSION(2, 28, 7), sizeof(DevCommRequirements228)},
    {NCCL_VERSION(2, 29, 2), kHeader + sizeof(DevCommRequirements228)},  // 72
    {NCCL_VERSION(2, 29, 7), 88},   // + ginConnectionType, ginExclusiveContexts, ginQueueDepth
    {NCCL_VERSION(2, 30, 3), 96},   // + ginTrafficClass, worldGinBarrierCount (2.30.7: two bools in the padding)
    {NCCL_VERSION(2, 32, 3), sizeof(ncclDevCommRequirements_t)},  // 120, these headers
};
static_assert(sizeof(ncclDevCommRequirements_t) == 120);

// A header-layout struct leads with its size, a small number; a 2.28 one with a pointer (or NULL).
bool looks_like_a_size(std::uint64_t first) { return first != 0 && first < 4096; }

}  // namespace

std::size_t requirements_size_of(int version) {
  std::size_t size = kLayouts[0].size;
  for (const Layout& l : kLayouts)
    if (l.since <= version) size = l.size;
  return size;
}

ncclResult_t RealRequirements::build(const char* fn, const void* user, int real_version) {
  std::uint64_t first;
  std::uint32_t magic, version;
  std::memcpy(&first, user, sizeof(first));
  std::memcpy(&magic, static_cast<const char*>(user) + 8, sizeof(magic));
  std::memcpy(&version, static_cast<const char*>(user) + 12, sizeof(version));
  const bool has_header = looks_like_a_size(first);
  if (has_header && (magic != NCCL_API_MAGIC || first < kHeader))
    return fail(ncclInvalidArgument, fn,
                "reqs was not initialized with NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER (size %llu, magic 0x%x)",
                static_cast<unsigned long long>(first), magic);
  storage_ = ncclDevCommRequirements_t NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER;
  char* out = reinterpret_cast<char*>(&storage_);
  const bool real_has_header = real_version >= kLayouts[1].since;
  if (!has_header) {
    if (!real_has_header) {  // same layout on both sides
      std::memcpy(out, user, sizeof(DevCommRequirements228));
      return ncclSuccess;
    }
    storage_.size = kHeader + kBody228;
    storage_.version = kHeaderless228Version;
    std::memcpy(out + kHeader, user, kBody228);
    return ncclSuccess;
  }
  if (!real_has_header)
    return fail(ncclInvalidUsage, fn,
                "reqs come from NCCL %u headers, whose device code needs a newer ncclDevComm than the real NCCL %d "
                "writes",
                version, real_version);
  const std::size_t size = std::min<std::size_t>({first, sizeof(storage_), requirements_size_of(real_version)});
  std::memcpy(out, user, size);
  storage_.size = size;
  return ncclSuccess;
}

}  // namespace purlin::shim
