// Flag and epoch arithmetic, the staging ring, and a randomized model of the drain protocol
// (one producer, several consumers, random interleavings) that checks the claims in flags.h:
// no slot is overwritten before every consumer drained it, consumers always read the chunk they
// waited for, every flag and ack word only grows, and nothing deadlocks.
#include "layout/flags.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <utility>
#include <vector>

namespace purlin::layout {
namespace {

TEST(Flags, EncodingIsMonotonicAcrossLaunchesAndNeverZero) {
  std::mt19937_64 rng(7);
  Epoch e = 0;
  Flag last = 0;
  for (int launch = 0; launch < 2000; ++launch) {
    const std::uint64_t ordinals = rng() % 9;  // zero-chunk launches included
    for (std::uint64_t c = 0; c < ordinals; ++c) {
      const Flag f = flag_value(e, c);
      ASSERT_GT(f, last);
      ASSERT_GT(f, e);
      ASSERT_LE(f, next_epoch(e, ordinals));
      last = f;
    }
    const Epoch next = next_epoch(e, ordinals);
    ASSERT_EQ((next - e) % 2, 1u) << "advance must be odd";
    ASSERT_NE(staging_half(next), staging_half(e));
    ASSERT_GE(next - e, ordinals);
    ASSERT_LE(next - e, ordinals + 1);
    e = next;
  }
}

TEST(Flags, WaitsAreGreaterOrEqual) {
  EXPECT_TRUE(flag_reached(flag_value(10, 3), flag_value(10, 3)));
  EXPECT_TRUE(flag_reached(flag_value(11, 0), flag_value(10, 0)));  // a later launch implies it
  EXPECT_FALSE(flag_reached(flag_value(10, 2), flag_value(10, 3)));
  EXPECT_FALSE(flag_reached(0, flag_value(0, 0)));  // fresh memory never satisfies a wait
}

TEST(Flags, PacketFlagsBeatStaleHalves) {
  // The packet half used at epoch e was last written two launches back.
  const Epoch e2 = 40, e1 = next_epoch(e2, 6), e = next_epoch(e1, 0);
  EXPECT_EQ(staging_half(e), staging_half(e2));
  EXPECT_GT(packet_flag(e), packet_flag(e2));
  EXPECT_GT(packet_flag(e), flag_value(e2, 5));
  EXPECT_GT(packet_flag(0), 0u);
}

TEST(StagingRing, SlotsWrapInsideTheEpochsHalf) {
  const StagingRing ring = StagingRing::fit(1000, 128);  // 7 slots, 104 bytes unused
  ASSERT_TRUE(ring.usable());
  EXPECT_EQ(ring.slots, 7u);
  EXPECT_EQ(ring.half_bytes(), 896u);
  EXPECT_EQ(ring.slot(0), 0u);
  EXPECT_EQ(ring.slot(9), 2u);
  EXPECT_EQ(ring.lap(6), 0u);
  EXPECT_EQ(ring.lap(7), 1u);
  EXPECT_EQ(ring.offset(4, 0), 0u);         // even epoch: first half
  EXPECT_EQ(ring.offset(5, 0), 1000u);      // odd epoch: second half, at the buffer's half
  EXPECT_EQ(ring.offset(5, 9), 1000u + 256u);
  for (std::uint64_t c = 0; c < 50; ++c) {
    EXPECT_LE(ring.offset(3, c) + ring.slot_bytes, 2 * ring.half_stride);
  }
  // Another ring in the same buffer puts its second half at the same place.
  EXPECT_EQ(StagingRing::fit(1000, 300).offset(1, 0), ring.offset(1, 0));
  EXPECT_FALSE(StagingRing::fit(100, 128).usable());
  EXPECT_FALSE(StagingRing::fit(100, 0).usable());
}

TEST(Drain, WaitValues) {
  const Epoch e = 21;
  EXPECT_EQ(drain_wait_value(e, 0, 4), e);  // first use: the release from the last launch
  EXPECT_EQ(drain_wait_value(e, 3, 4), e);
  EXPECT_EQ(drain_wait_value(e, 4, 4), drain_ack_value(e, 0));  // reuse: ordinal 0's drain
  EXPECT_EQ(drain_wait_value(e, 9, 4), drain_ack_value(e, 5));
  EXPECT_EQ(drain_release_value(e, 4), next_epoch(e, 4));
}

// Randomized model of one producer feeding `consumers` consumers through a ring of `slots` per
// half. Each step runs one enabled actor; launches have random chunk counts, and each ordinal is
// read by a random subset of the consumers (as with V partitions, where a consumer may finish a
// launch, and publish its release for the next one, while the producer is still staging).
struct DrainModel {
  struct Occupant {
    int launch = -1;
    std::uint64_t ordinal = 0;
    int drains_left = 0;
  };
  struct Consumer {
    int launch = 0;
    std::uint64_t ordinal = 0;
    bool released = false;  // published this launch's release
  };

  std::uint64_t slots;
  int consumers;
  std::vector<std::uint64_t> ordinals;  // per launch
  std::vector<std::vector<unsigned>> readers;  // [launch][ordinal]: bit k = consumer k reads it
  std::vector<Epoch> epochs;            // per launch, plus the one after the last
  std::vector<std::vector<Occupant>> data;           // [half][slot]
  std::vector<Flag> flag;                            // [slot]: one word across halves
  std::vector<std::vector<std::vector<Flag>>> ack;   // [consumer][half][slot]
  int p_launch = 0;
  std::uint64_t p_ordinal = 0;
  std::vector<Consumer> q;

  DrainModel(std::uint64_t s, int k, std::vector<std::uint64_t> per_launch,
             std::vector<std::vector<unsigned>> who)
      : slots(s), consumers(k), ordinals(std::move(per_launch)), readers(std::move(who)),
        data(2, std::vector<Occupant>(s)), flag(s, 0),
        ack(k, std::vector<std::vector<Flag>>(2, std::vector<Flag>(s, 0))), q(k) {
    epochs.push_back(0);  // the protocol's initial state: epoch 0, zeroed flag and ack words
    for (std::uint64_t n : ordinals) epochs.push_back(next_epoch(epochs.back(), n));
  }

  int launches() const { return static_cast<int>(ordinals.size()); }

  static void store(Flag& word, Flag value) {
    ASSERT_GE(value, word) << "a flag or ack word went backwards";
    word = value;
  }

  bool reads(int k, int launch, std::uint64_t ordinal) const {
    return (readers[launch][ordinal] >> k & 1u) != 0;
  }

  // Producer: stage the next ordinal once the slot's previous readers drained it. Who read a
  // slot two launches back is unknown, so a first use waits for every consumer's release;
  // a reuse waits only for the readers of the ordinal it replaces.
  bool step_producer() {
    while (p_launch < launches() && p_ordinal == ordinals[p_launch]) {
      ++p_launch;
      p_ordinal = 0;
    }
    if (p_launch == launches()) return false;
    const Epoch e = epochs[p_launch];
    const unsigned h = staging_half(e);
    const std::uint64_t s = p_ordinal % slots;
    for (int k = 0; k < consumers; ++k) {
      if (p_ordinal >= slots && !reads(k, p_launch, p_ordinal - slots)) continue;
      if (!flag_reached(ack[k][h][s], drain_wait_value(e, p_ordinal, slots))) return false;
    }
    EXPECT_EQ(data[h][s].drains_left, 0) << "slot overwritten before it was drained";
    data[h][s] = {p_launch, p_ordinal, std::popcount(readers[p_launch][p_ordinal])};
    store(flag[s], flag_value(e, p_ordinal));
    ++p_ordinal;
    return true;
  }

  // Consumer k: publish the release once per launch, then drain ordinals in order.
  bool step_consumer(int k) {
    Consumer& c = q[k];
    if (c.launch == launches()) return false;
    const Epoch e = epochs[c.launch];
    const unsigned h = staging_half(e);
    if (!c.released) {
      for (std::uint64_t s = 0; s < slots; ++s) {
        store(ack[k][h ^ 1u][s], drain_release_value(e, ordinals[c.launch]));
      }
      c.released = true;
      return true;
    }
    while (c.ordinal < ordinals[c.launch] && !reads(k, c.launch, c.ordinal)) ++c.ordinal;
    if (c.ordinal == ordinals[c.launch]) {
      c = {c.launch + 1, 0, false};
      return true;
    }
    const std::uint64_t s = c.ordinal % slots;
    if (!flag_reached(flag[s], flag_value(e, c.ordinal))) return false;
    Occupant& o = data[h][s];
    EXPECT_EQ(o.launch, c.launch) << "consumer read another launch's chunk";
    EXPECT_EQ(o.ordinal, c.ordinal);
    EXPECT_GT(o.drains_left, 0);
    --o.drains_left;
    store(ack[k][h][s], drain_ack_value(e, c.ordinal));
    ++c.ordinal;
    return true;
  }

  void run(std::mt19937& rng) {
    for (;;) {
      std::vector<int> order(consumers + 1);
      for (int i = 0; i <= consumers; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      bool progressed = false;
      for (int actor : order) {
        progressed = actor == consumers ? step_producer() : step_consumer(actor);
        if (::testing::Test::HasFailure()) return;
        if (progressed) break;
      }
      if (!progressed) break;
    }
    EXPECT_EQ(p_launch, launches()) << "producer deadlocked";
    for (int k = 0; k < consumers; ++k) EXPECT_EQ(q[k].launch, launches()) << "consumer stuck";
  }
};

TEST(Drain, RandomizedProtocolModel) {
  for (unsigned seed = 0; seed < 400; ++seed) {
    std::mt19937 rng(seed);
    const std::uint64_t slots = 1 + rng() % 4;
    const int consumers = 1 + static_cast<int>(rng() % 3);
    std::vector<std::uint64_t> per_launch(1 + rng() % 12);
    std::vector<std::vector<unsigned>> readers;
    for (auto& n : per_launch) {
      n = rng() % (3 * slots + 1);  // 0, fewer and more than slots
      readers.emplace_back(n);
      // Every consumer reads everything (a packed input) in half of the seeds.
      for (auto& mask : readers.back()) mask = (seed % 2 == 0 ? ~0u : rng()) & ((1u << consumers) - 1);
    }
    SCOPED_TRACE(testing::Message() << "seed " << seed << " slots " << slots);
    DrainModel model(slots, consumers, per_launch, readers);
    model.run(rng);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace purlin::layout
