#include "runtime/bootstrap/unique_id.h"

#include <cstring>

#include "base/log.h"
#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/root.h"

namespace purlin::runtime {
namespace {

constexpr uint8_t kMagic[8] = {'P', 'U', 'R', 'L', 'I', 'N', 1, 0};
constexpr size_t kSecretOffset = sizeof(kMagic);
constexpr size_t kRootOffset = kSecretOffset + sizeof(Secret);
static_assert(kRootOffset + sizeof(net::WireAddress) <= NCCL_UNIQUE_ID_BYTES);

}  // namespace

bool decode_unique_id(const ncclUniqueId& id, UniqueIdContents* out) {
  if (std::memcmp(id.internal, kMagic, sizeof(kMagic)) != 0) return false;
  net::WireAddress wire;
  std::memcpy(&wire, id.internal + kRootOffset, sizeof(wire));
  UniqueIdContents c;
  if (!net::Address::from_wire(wire, &c.root)) return false;
  std::memcpy(&c.secret, id.internal + kSecretOffset, sizeof(c.secret));
  *out = c;
  return true;
}

void encode_unique_id(const UniqueIdContents& contents, ncclUniqueId* out) {
  std::memset(out->internal, 0, sizeof(out->internal));
  std::memcpy(out->internal, kMagic, sizeof(kMagic));
  std::memcpy(out->internal + kSecretOffset, &contents.secret, sizeof(contents.secret));
  const net::WireAddress wire = contents.root.to_wire();
  std::memcpy(out->internal + kRootOffset, &wire, sizeof(wire));
}

bool unique_id_valid(const ncclUniqueId& id) {
  UniqueIdContents ignored;
  return decode_unique_id(id, &ignored);
}

ncclResult_t create_unique_id(ncclUniqueId* out) {
  if (out == nullptr) {
    PURLIN_WARN("bootstrap: create_unique_id given a null id pointer");
    return ncclInvalidArgument;
  }
  UniqueIdContents contents;
  if (ncclResult_t r = auth::random_bytes(contents.secret.bytes, sizeof(contents.secret.bytes)); r != ncclSuccess) {
    return r;
  }
  net::LocalAddress local;
  if (ncclResult_t r = net::choose_local_address(&local); r != ncclSuccess) return r;
  net::Socket listener;
  if (ncclResult_t r = net::listen_on(local.addr, &listener, &contents.root); r != ncclSuccess) return r;
  const int timeout_s = bootstrap_timeout_s();
  PURLIN_INFO(kBootstrap, "bootstrap: root listening on %s %s (timeout %d s)", local.ifname.c_str(),
              contents.root.str().c_str(), timeout_s);
  // The id is filled only once the root is serving, so a returned id always names a live root.
  if (ncclResult_t r = start_root(std::move(listener), contents.secret, timeout_s); r != ncclSuccess) return r;
  encode_unique_id(contents, out);
  return ncclSuccess;
}

}  // namespace purlin::runtime
