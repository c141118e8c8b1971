// The reduction operators created on one communicator (ncclRedOpCreatePreMulSum).
//
// On a native communicator Purlin's kernels run every reduction, so the operator is
// Purlin's own: an id >= ncclNumOps chosen here, the datatype it was made for, and its
// scalar. A host-resident scalar is copied at creation, as NCCL does, so the application
// may free or change its variable afterwards. On a forwarded communicator the real NCCL
// creates the operator and the table only records the real id and datatype, so that
// validation can accept it.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace purlin::shim {

struct UserOp {
  ncclDataType_t type = ncclFloat32;
  ncclScalarResidence_t residence = ncclScalarHostImmediate;
  std::uint64_t scalar_bits = 0;         // host residence: the value, in the low bytes
  const void* scalar_device = nullptr;   // device residence: where the kernel reads it
};

class UserOps {
 public:
  // A new operator with the lowest free id >= ncclNumOps (ids are reused after destroy, so
  // ranks that create and destroy in the same order agree on them, as with NCCL). Reads
  // `type_bytes` (<= 8) from `scalar` now for host residence. Empty when no id is left.
  std::optional<ncclRedOp_t> create(const void* scalar, ncclDataType_t type, size_t type_bytes,
                                    ncclScalarResidence_t residence);
  // Records an operator someone else (the real NCCL) created under `id`.
  void record(ncclRedOp_t id, ncclDataType_t type, ncclScalarResidence_t residence);
  // False when `id` is not in the table.
  bool erase(ncclRedOp_t id);
  std::optional<UserOp> find(ncclRedOp_t id) const;
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<int, UserOp> ops_;
};

}  // namespace purlin::shim
