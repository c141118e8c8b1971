#include "user_ops.h"

#include <cstring>

namespace purlin::shim {

std::optional<ncclRedOp_t> UserOps::create(const void* scalar, ncclDataType_t type, size_t type_bytes,
                                           ncclScalarResidence_t residence) {
  UserOp op;
  op.type = type;
  op.residence = residence;
  if (residence == ncclScalarHostImmediate) {
    // Little-endian low bytes: launch::Call::scalar_bits reads the value back the same way.
    std::memcpy(&op.scalar_bits, scalar, type_bytes < sizeof(op.scalar_bits) ? type_bytes : sizeof(op.scalar_bits));
  } else {
    op.scalar_device = scalar;
  }
  std::lock_guard<std::mutex> lock(mu_);
  int id = ncclNumOps;
  for (const auto& [used, _] : ops_) {  // ascending: the first gap is the lowest free id
    if (used != id) break;
    if (id == ncclMaxRedOp) return std::nullopt;
    ++id;
  }
  ops_.emplace(id, op);
  return static_cast<ncclRedOp_t>(id);
}

void UserOps::record(ncclRedOp_t id, ncclDataType_t type, ncclScalarResidence_t residence) {
  UserOp op;
  op.type = type;
  op.residence = residence;
  std::lock_guard<std::mutex> lock(mu_);
  ops_[static_cast<int>(id)] = op;
}

bool UserOps::erase(ncclRedOp_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_.erase(static_cast<int>(id)) != 0;
}

std::optional<UserOp> UserOps::find(ncclRedOp_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ops_.find(static_cast<int>(id));
  if (it == ops_.end()) return std::nullopt;
  return it->second;
}

size_t UserOps::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_.size();
}

}  // namespace purlin::shim
