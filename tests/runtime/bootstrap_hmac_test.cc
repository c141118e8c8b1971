// SHA-256 against the FIPS 180-4 examples and HMAC-SHA256 against RFC 4231: the bootstrap's
// mutual authentication is only as good as these two functions.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/bootstrap/hmac_sha256.h"

namespace purlin::runtime::crypto {
namespace {

std::string hex(const Digest& d, size_t bytes = 32) {
  std::string s;
  char two[3];
  for (size_t i = 0; i < bytes; ++i) {
    std::snprintf(two, sizeof(two), "%02x", d[i]);
    s += two;
  }
  return s;
}

std::string sha(const std::string& m) { return hex(sha256(m.data(), m.size())); }

std::string hmac(const std::vector<uint8_t>& key, const std::string& data, size_t bytes = 32) {
  return hex(hmac_sha256(key.data(), key.size(), data.data(), data.size()), bytes);
}

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Feeding the same bytes in pieces that straddle block boundaries must not change the digest.
TEST(Sha256, IncrementalMatchesOneShot) {
  std::string m;
  for (int i = 0; i < 1000; ++i) m += static_cast<char>(i * 7);
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 129u}) {
    Sha256 h;
    for (size_t at = 0; at < m.size(); at += piece) h.update(m.data() + at, std::min(piece, m.size() - at));
    EXPECT_EQ(hex(h.finish()), sha(m)) << "pieces of " << piece;
  }
}

TEST(HmacSha256, Rfc4231) {
  EXPECT_EQ(hmac(std::vector<uint8_t>(20, 0x0b), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmac({'J', 'e', 'f', 'e'}, "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmac(std::vector<uint8_t>(20, 0xaa), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  std::vector<uint8_t> counting;
  for (uint8_t b = 1; b <= 25; ++b) counting.push_back(b);
  EXPECT_EQ(hmac(counting, std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  EXPECT_EQ(hmac(std::vector<uint8_t>(20, 0x0c), "Test With Truncation", 16), "a3b6167473100ee06e0c796c2955552b");
  const std::vector<uint8_t> long_key(131, 0xaa);
  EXPECT_EQ(hmac(long_key, "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(hmac(long_key,
                 "This is a test using a larger than block-size key and a larger than block-size data. The key "
                 "needs to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, ConstantTimeEqual) {
  const uint8_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, c[4] = {1, 2, 3, 5}, d[4] = {0, 2, 3, 4};
  EXPECT_TRUE(constant_time_equal(a, b, 4));
  EXPECT_FALSE(constant_time_equal(a, c, 4));
  EXPECT_FALSE(constant_time_equal(a, d, 4));
  EXPECT_TRUE(constant_time_equal(a, c, 0));
}

}  // namespace
}  // namespace purlin::runtime::crypto
