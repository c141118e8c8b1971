// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the bootstrap's challenge-response.
//
// Implemented here rather than taken from a crypto library because the bootstrap needs only
// these two functions, and a drop-in libnccl.so.2 must not pull a new shared dependency into
// every process that loads it. Checked against the FIPS 180-4 and RFC 4231 test vectors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace purlin::runtime::crypto {

using Digest = std::array<uint8_t, 32>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  Digest finish();

 private:
  void compress(const uint8_t block[64]);

  uint32_t state_[8];
  uint8_t block_[64];
  size_t used_ = 0;      // bytes in block_
  uint64_t total_ = 0;   // bytes hashed so far
};

Digest sha256(const void* data, size_t len);

// Incremental HMAC-SHA256, so that a proof can cover several fields without concatenating them.
class HmacSha256 {
 public:
  HmacSha256(const void* key, size_t key_len);
  void update(const void* data, size_t len) { inner_.update(data, len); }
  Digest finish();

 private:
  Sha256 inner_;
  uint8_t outer_pad_[64];
};

Digest hmac_sha256(const void* key, size_t key_len, const void* data, size_t len);

// Compares without an early exit, so that the time taken says nothing about where a forged
// proof first differs from the real one.
bool constant_time_equal(const void* a, const void* b, size_t len);

}  // namespace purlin::runtime::crypto
