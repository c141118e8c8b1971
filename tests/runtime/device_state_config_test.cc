// The host side of the SNAC device state (CI, no GPU): DeviceStateConfig defaults and their
// environment overrides, and the block geometry every rank must compute identically.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "runtime/device_layout.h"
#include "runtime/stall_report.h"
#include "runtime/device_state.h"

namespace purlin::runtime {
namespace {

constexpr std::size_t kMiB = 1024 * 1024;

class DeviceStateConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* v : {"PURLIN_STAGING_BYTES", "PURLIN_PACKET_BYTES", "PURLIN_TIMEOUT_S",
                          "PURLIN_POLL_CHECK_EVERY", "PURLIN_POLL_SLEEP_NS", "PURLIN_P2P_CHUNK_BYTES",
                          "PURLIN_P2P_SLOTS", "PURLIN_P2P_PACKET_BYTES"}) {
      ::unsetenv(v);
    }
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }
};

TEST_F(DeviceStateConfigTest, Defaults) {
  const DeviceStateConfig c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.staging_bytes, 32 * kMiB);
  EXPECT_EQ(c.slots, 64u);
  EXPECT_EQ(c.packet_bytes, 64u * 1024);
  EXPECT_EQ(c.packet_bytes, snac::Policy{}.latency_max_bytes);  // latency regime reachable
  EXPECT_EQ(c.epoch_slots, 32);
  EXPECT_EQ(c.timeout_ns, 0u);
  EXPECT_EQ(c.poll_check_every, 1024u);
  EXPECT_EQ(c.poll_sleep_ns, 100u);
  EXPECT_EQ(c.pair_chunk_bytes, 128u * 1024);
  EXPECT_EQ(c.pair_slots, 2u);
  EXPECT_EQ(c.pair_packet_bytes, 16u * 1024);
  EXPECT_EQ(c.pair_packet_slots, 4u);
}

TEST_F(DeviceStateConfigTest, PointToPointGeometry) {
  set("PURLIN_P2P_CHUNK_BYTES", "1000");  // down to a multiple of 256
  set("PURLIN_P2P_SLOTS", "3");
  DeviceStateConfig c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.pair_chunk_bytes, 768u);
  EXPECT_EQ(c.pair_slots, 3u);
  set("PURLIN_P2P_CHUNK_BYTES", "100");  // below 256: the default, with a WARN
  set("PURLIN_P2P_SLOTS", "0");
  c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.pair_chunk_bytes, 128u * 1024);
  EXPECT_EQ(c.pair_slots, 2u);
  set("PURLIN_P2P_PACKET_BYTES", "0");  // every transfer staged
  c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.pair_packet_bytes, 0u);
  EXPECT_EQ(c.pair_packet_slots, 0u);
  set("PURLIN_P2P_PACKET_BYTES", "1001");  // down to whole packets
  c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.pair_packet_bytes, 1000u);
}

TEST_F(DeviceStateConfigTest, Overrides) {
  set("PURLIN_STAGING_BYTES", "4194304");
  set("PURLIN_PACKET_BYTES", "0");  // no latency regime
  set("PURLIN_TIMEOUT_S", "2.5");
  set("PURLIN_POLL_CHECK_EVERY", "64");
  set("PURLIN_POLL_SLEEP_NS", "0");
  DeviceStateConfig c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.poll_check_every, 64u);
  EXPECT_EQ(c.poll_sleep_ns, 0u);
  EXPECT_EQ(c.staging_bytes, 4 * kMiB);
  EXPECT_EQ(c.packet_bytes, 0u);
  EXPECT_EQ(c.timeout_ns, 2'500'000'000u);

  set("PURLIN_STAGING_BYTES", "1048577");  // rounded up to even 256-byte halves
  set("PURLIN_PACKET_BYTES", "0x8000");
  set("PURLIN_TIMEOUT_S", "1e-12");  // positive never rounds to "no timeout"
  c = DeviceStateConfig::from_env();
  EXPECT_EQ(c.staging_bytes, kMiB + 512);
  EXPECT_EQ(c.staging_bytes % 512, 0u);
  EXPECT_EQ(c.packet_bytes, 32u * 1024);
  EXPECT_EQ(c.timeout_ns, 1u);
}

TEST_F(DeviceStateConfigTest, NonsenseFallsBackToDefaults) {
  for (const char* bad : {"0", "100", "-1", "abc", "16MiB", "1048575"}) {
    set("PURLIN_STAGING_BYTES", bad);
    EXPECT_EQ(DeviceStateConfig::from_env().staging_bytes, 32 * kMiB) << bad;
  }
  for (const char* bad : {"-1", "2000000", "x"}) {
    set("PURLIN_PACKET_BYTES", bad);
    EXPECT_EQ(DeviceStateConfig::from_env().packet_bytes, 64u * 1024) << bad;
  }
  for (const char* bad : {"-1", "nan", "inf", "abc", "1e10", "3s"}) {
    set("PURLIN_TIMEOUT_S", bad);
    EXPECT_EQ(DeviceStateConfig::from_env().timeout_ns, 0u) << bad;
  }
  for (const char* bad : {"0", "-3", "2000000", "many"}) {
    set("PURLIN_POLL_CHECK_EVERY", bad);
    EXPECT_EQ(DeviceStateConfig::from_env().poll_check_every, 1024u) << bad;
  }
  for (const char* bad : {"-1", "5000000", "fast"}) {
    set("PURLIN_POLL_SLEEP_NS", bad);
    EXPECT_EQ(DeviceStateConfig::from_env().poll_sleep_ns, 100u) << bad;
  }
}

bool disjoint_in_order(const Span& a, const Span& b) { return a.offset + a.bytes <= b.offset; }

TEST(DeviceLayout, SubBuffersAreAlignedDisjointAndSized) {
  for (int ranks : {1, 2, 3, 8, 64}) {
    for (std::size_t packets : {std::size_t{0}, std::size_t{1}, packet_capacity(64 * 1024)}) {
      const PeerBlockLayout p = PeerBlockLayout::make(ranks, 1 * kMiB + 512, 64, packets);
      EXPECT_EQ(p.signals.bytes, (snac::SignalLayout{ranks, 64}.words()) * 8);
      EXPECT_EQ(p.packets.bytes, (snac::PacketLayout{ranks, packets}.packets()) * 16);
      EXPECT_TRUE(disjoint_in_order(p.staging, p.signals));
      EXPECT_TRUE(disjoint_in_order(p.signals, p.packets));
      EXPECT_LE(p.packets.offset + p.packets.bytes, p.bytes);
      for (const Span& s : {p.staging, p.signals, p.packets}) {
        EXPECT_EQ(s.offset % kSubBufferAlign, 0u);
      }
      EXPECT_EQ(p.bytes % kSubBufferAlign, 0u);
      const PeerBlockLayout q = PeerBlockLayout::make(ranks, 1 * kMiB + 512, 64, packets, PairGeometry{768, 3, 96, 2});
      EXPECT_EQ(q.pair_staging.bytes, static_cast<std::size_t>(ranks) * 3 * 768);
      EXPECT_EQ(q.pair_signals.bytes, (snac::PairSignalLayout{ranks, 3, 2}.words()) * 8);
      EXPECT_EQ(q.pair_packets.bytes, static_cast<std::size_t>(ranks) * 2 * (96 / 8) * 16);
      EXPECT_TRUE(disjoint_in_order(q.pair_signals, q.pair_packets));
      EXPECT_LE(q.pair_packets.offset + q.pair_packets.bytes, q.bytes);
      EXPECT_EQ(q.pair_packets.offset % kSubBufferAlign, 0u);
      EXPECT_TRUE(disjoint_in_order(q.packets, q.pair_staging));
      EXPECT_TRUE(disjoint_in_order(q.pair_staging, q.pair_signals));
      EXPECT_EQ(q.pair_staging.offset % kSubBufferAlign, 0u);
      EXPECT_EQ(q.pair_signals.offset % kSubBufferAlign, 0u);

      const LocalBlockLayout l = LocalBlockLayout::make(ranks, 64, packets, 33);
      EXPECT_EQ(l.epochs.bytes, 33u * 8);
      EXPECT_EQ(l.started.bytes, 33u * 8);
      EXPECT_EQ(l.counters.bytes, (snac::CounterLayout{ranks, 64}.words()) * 8);
      EXPECT_EQ(l.scratch.bytes, (snac::PacketLayout{ranks, packets}.scratch_bytes()));
      EXPECT_TRUE(disjoint_in_order(l.epochs, l.started));
      EXPECT_TRUE(disjoint_in_order(l.started, l.counters));
      EXPECT_TRUE(disjoint_in_order(l.counters, l.scratch));
      EXPECT_LE(l.scratch.offset + l.scratch.bytes, l.bytes);
      EXPECT_EQ(l.pair_sequences.bytes, 33u * static_cast<std::size_t>(ranks) * snac::kPairCounters * 8);
      EXPECT_TRUE(disjoint_in_order(l.scratch, l.pair_sequences));
      EXPECT_LE(l.pair_sequences.offset + l.pair_sequences.bytes, l.bytes);
      for (const Span& s : {l.epochs, l.started, l.counters, l.scratch}) {
        EXPECT_EQ(s.offset % kSubBufferAlign, 0u);
      }
    }
  }
  EXPECT_EQ(packet_capacity(64 * 1024), 8192u);
}

// A stall record's text names the polled word from the area it lies in: a point-to-point ack,
// a point-to-point packet, or a collective's flag; a point-to-point launch (workers 0) says
// nothing of CTA starts; a point-to-point mismatch (no call fingerprint) names the send's bytes.
TEST(StallReport, NamesTheWordFromItsArea) {
  PolledWords w{{4, 8}, {4, 16}, {4, 8, 2}, {4, 2, 16}, 0x10000, 0x20000, 0x30000, 0x40000};
  snac::StallRecord r{};
  r.timed_out = 1;
  r.word = w.pair_signals_at + w.pair_signals.ack(2, 5) * sizeof(snac::Flag);
  r.want = 7;
  std::string text = describe_stall(r, w);
  EXPECT_NE(text.find("point-to-point ack from receiver rank 2 (slot 5)"), std::string::npos) << text;
  EXPECT_EQ(text.find("CTAs had started"), std::string::npos) << text;
  r.word = w.pair_packets_at + w.pair_packets.index(3, 1, 4) * sizeof(snac::Packet);
  text = describe_stall(r, w);
  EXPECT_NE(text.find("point-to-point packet 4 from rank 3 (packet slot 1)"), std::string::npos) << text;
  r.word = w.signals_at + w.signals.flag(0, 1, 3) * sizeof(snac::Flag);
  r.workers = 4;
  r.started = 3;
  r.missing = 1u << 2;
  text = describe_stall(r, w);
  EXPECT_NE(text.find("flag from rank 1"), std::string::npos) << text;
  EXPECT_NE(text.find("3 of the launch's 4 CTAs had started (not: 2)"), std::string::npos) << text;
  snac::StallRecord m{};
  m.mismatch = 1;
  m.peer = 1;
  m.theirs = 100;
  text = describe_stall(m, w);
  EXPECT_NE(text.find("point-to-point mismatch"), std::string::npos) << text;
  EXPECT_NE(text.find("100 bytes"), std::string::npos) << text;
}

}  // namespace
}  // namespace purlin::runtime
