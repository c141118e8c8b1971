#include "runtime/bootstrap/auth.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "runtime/bootstrap/hmac_sha256.h"

namespace purlin::runtime::auth {
namespace {

// Versioned with the wire format: a proof of another version never verifies.
constexpr char kProofLabel[] = "purlin-bootstrap-v2 proof";
constexpr char kMeshLabel[] = "purlin-bootstrap-v2 mesh key";

}  // namespace

ncclResult_t random_bytes(void* out, size_t len) {
  auto* p = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::getrandom(p + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      PURLIN_WARN("bootstrap: getrandom failed: %s", std::strerror(errno));
      return ncclSystemError;
    }
    done += static_cast<size_t>(n);
  }
  return ncclSuccess;
}

Key root_key(const Secret& secret) {
  Key k{};
  std::memcpy(k.bytes, secret.bytes, sizeof(secret.bytes));
  k.len = sizeof(secret.bytes);
  return k;
}

Key mesh_key(const Secret& secret, const wire::Nonce& group) {
  crypto::HmacSha256 h(secret.bytes, sizeof(secret.bytes));
  h.update(kMeshLabel, sizeof(kMeshLabel));
  h.update(group.bytes, sizeof(group.bytes));
  const crypto::Digest d = h.finish();
  Key k{};
  std::memcpy(k.bytes, d.data(), d.size());
  k.len = d.size();
  return k;
}

wire::Mac prove(const Key& key, Role role, const void* hello, size_t hello_len, const wire::Nonce& server_nonce) {
  crypto::HmacSha256 h(key.bytes, key.len);
  h.update(kProofLabel, sizeof(kProofLabel));
  const uint8_t r = static_cast<uint8_t>(role);
  h.update(&r, 1);
  h.update(hello, hello_len);
  h.update(server_nonce.bytes, sizeof(server_nonce.bytes));
  const crypto::Digest d = h.finish();
  wire::Mac mac;
  std::memcpy(mac.bytes, d.data(), d.size());
  return mac;
}

bool verify(const Key& key, Role role, const void* hello, size_t hello_len, const wire::Nonce& server_nonce,
            const wire::Mac& mac) {
  const wire::Mac expected = prove(key, role, hello, hello_len, server_nonce);
  return crypto::constant_time_equal(expected.bytes, mac.bytes, sizeof(mac.bytes));
}

}  // namespace purlin::runtime::auth
