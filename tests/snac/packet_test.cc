// The packet contract every backend keeps (backend.h, device_backend.cuh): put_packet is one
// 16-byte store that cannot tear, so a reader that sees a flag sees the payload stored with it,
// and try_packet reads a packet whose flag is older than the one it waits for as missing, even
// when its payload is already new.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "snac/host_backend.h"

namespace purlin::snac::test {
namespace {

// A payload that names the flag it travels with: multiplication by an odd constant is a
// bijection on 64-bit words, so any other flag's payload decodes to another flag.
constexpr std::uint64_t kOdd = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kInverse = [] {
  std::uint64_t x = kOdd;  // Newton's iteration for the inverse modulo 2^64
  for (int i = 0; i < 6; ++i) x *= 2 - kOdd * x;
  return x;
}();
static_assert(kOdd * kInverse == 1);
constexpr std::uint64_t payload_of(Flag f) { return f * kOdd; }
constexpr Flag flag_of(std::uint64_t payload) { return payload * kInverse; }

class Packets : public ::testing::Test {
 protected:
  HostControl control_{std::chrono::milliseconds(10000)};
  Handle handle_{};
  HostBackend be_{control_, handle_, 0};
};

// One writer stores ever newer flags into a few packets while readers poll them for the next
// flag each expects. A torn packet (new flag, old payload) would decode below the flag waited
// for, as would a flag that went backwards.
TEST_F(Packets, AReaderThatSeesAFlagSeesItsPayload) {
  constexpr int kPackets = 4;
  constexpr Flag kLast = 20000;
  constexpr int kReaders = 2;
  std::vector<Packet> packets(kPackets, Packet{0, 0});
  std::atomic<int> torn{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&, t] {
      std::vector<Flag> want(kPackets, 1);
      for (int done = 0; done < kPackets;) {
        done = 0;
        for (int p = 0; p < kPackets; ++p) {
          const int i = (p + t) % kPackets;
          std::uint64_t payload = 0;
          if (want[i] > kLast) {
            ++done;
          } else if (be_.try_packet(&packets[i], want[i], payload)) {
            const Flag seen = flag_of(payload);
            if (seen < want[i] || seen > kLast) torn.fetch_add(1);
            want[i] = seen >= want[i] && seen <= kLast ? seen + 1 : kLast + 1;
          }
        }
      }
    });
  }
  for (Flag f = 1; f <= kLast; ++f) {
    for (int i = 0; i < kPackets; ++i) be_.put_packet(&packets[i], payload_of(f), f);
  }
  for (std::thread& r : readers) r.join();
  EXPECT_EQ(torn.load(), 0);
}

// Waiting for flag f: an older flag is missing whatever the payload beside it (the half of a
// store that tore, or the launch two back), a newer one is there (flags only grow).
TEST_F(Packets, AnOlderFlagReadsAsMissing) {
  std::uint64_t payload = 0;
  Packet fresh{0xdeadbeefull, 0};  // the initial state: anything beside a zero flag
  EXPECT_FALSE(be_.try_packet(&fresh, 1, payload));

  Packet p{};
  be_.put_packet(&p, payload_of(10), 10);
  EXPECT_FALSE(be_.try_packet(&p, 11, payload));
  ASSERT_TRUE(be_.try_packet(&p, 10, payload));
  EXPECT_EQ(payload, payload_of(10));
  ASSERT_TRUE(be_.try_packet(&p, 9, payload));
  EXPECT_EQ(flag_of(payload), 10u);

  Packet torn{payload_of(12), 10};  // the new payload arrived, its flag did not
  EXPECT_FALSE(be_.try_packet(&torn, 12, payload));
}

}  // namespace
}  // namespace purlin::snac::test
