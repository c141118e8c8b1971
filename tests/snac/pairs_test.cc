// Point-to-point (snac/pairs.h) on the host backend: random grouped send/recv patterns, several
// launches back to back on one world (so every pair's sequence numbers, ring slots and acks carry
// over), each rank issuing its transfers in a random order that keeps the order per pair, as an
// application may. Every receive buffer is compared byte for byte, with guard bytes around it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/pair_patterns.h"
#include "snac/host_world.h"
#include "snac/pair_launch.h"
#include "snac/pairs.h"
#include "snac/signal_names.h"

namespace purlin::snac {
namespace {

constexpr std::size_t kGuard = 16;
constexpr std::byte kGuardByte{0xA5};

using test_patterns::issue_order;
using test_patterns::make_pattern;
using test_patterns::Pattern;
using test_patterns::pattern_name;
using test_patterns::Transfer;

// Sizes that matter to the protocol: nothing, one byte, odd sizes inside one chunk, and sizes
// that take more chunks than a pair has slots (the sender waits for acks).
std::size_t random_bytes(std::mt19937_64& rng, const HostWorldConfig& w) {
  const std::size_t wrap = w.pair_chunk_bytes * (w.pair_slots + 2) + 7;
  switch (rng() % 5) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 1 + rng() % w.pair_chunk_bytes;
    case 3: return w.pair_chunk_bytes;
    default: return wrap + rng() % w.pair_chunk_bytes;
  }
}

// One launch of the whole world: the transfers, their buffers and each rank's PairLaunch.
struct Launch {
  std::vector<Transfer> transfers;
  std::vector<std::vector<std::byte>> src;  // per transfer
  std::vector<std::vector<std::byte>> dst;  // per transfer, guard bytes around
  std::vector<PairLaunch<kMaxPairOps>> per_rank;
};

// The ops rank r issues, in an order that is random except within each pair and direction.
std::vector<PairOp> rank_ops(const Launch& l, int r, std::mt19937_64& rng) {
  std::vector<PairOp> ops;
  for (const auto& [i, recv] : issue_order(l.transfers, r, rng)) {
    const Transfer& t = l.transfers[i];
    if (!recv) {
      ops.push_back({l.src[i].data(), nullptr, t.size, t.to, PairDirection::send});
    } else {
      ops.push_back({nullptr, const_cast<std::byte*>(l.dst[i].data()) + kGuard, t.size, t.from, PairDirection::recv});
    }
  }
  return ops;
}

Launch make_launch(Pattern p, const HostWorld& world, std::mt19937_64& rng) {
  const HostWorldConfig& w = world.config();
  Launch l;
  l.transfers = make_pattern(p, w.ranks, rng, [&](std::mt19937_64& g) { return random_bytes(g, w); });
  for (const Transfer& t : l.transfers) {
    std::vector<std::byte> s(t.size);
    for (std::byte& b : s) b = static_cast<std::byte>(rng());
    l.src.push_back(std::move(s));
    l.dst.emplace_back(t.size + 2 * kGuard, kGuardByte);
  }
  l.per_rank.resize(static_cast<std::size_t>(w.ranks));
  for (int r = 0; r < w.ranks; ++r) {
    const std::vector<PairOp> ops = rank_ops(l, r, rng);
    const int max_workers = 1 + static_cast<int>(rng() % static_cast<unsigned>(w.workers));
    const char* what = "";
    const Status s = make_pair_launch(world.pair_handle(r), ops.data(), static_cast<int>(ops.size()), max_workers,
                                      l.per_rank[static_cast<std::size_t>(r)], &what);
    EXPECT_EQ(s, Status::ok) << what;
  }
  return l;
}

void expect_delivered(const Launch& l, Pattern p, int call) {
  for (std::size_t i = 0; i < l.transfers.size(); ++i) {
    const Transfer& t = l.transfers[i];
    const std::vector<std::byte>& d = l.dst[i];
    const bool guards = std::all_of(d.begin(), d.begin() + kGuard, [](std::byte b) { return b == kGuardByte; }) &&
                        std::all_of(d.end() - kGuard, d.end(), [](std::byte b) { return b == kGuardByte; });
    const bool data = t.size == 0 || std::memcmp(d.data() + kGuard, l.src[i].data(), t.size) == 0;
    EXPECT_TRUE(guards && data) << pattern_name(p) << " call " << call << ": " << t.size << " B from rank " << t.from
                                << " to rank " << t.to << (guards ? "" : ": guard bytes overwritten")
                                << (data ? "" : ": wrong data");
  }
}

// A handle for planning only (no memory): rank, ranks and the geometry the plan reads.
PairHandle plan_handle(int rank, int ranks, std::size_t chunk_bytes, std::uint32_t slots, std::size_t packet_bytes = 0) {
  PairHandle h;
  h.rank = rank;
  h.ranks = ranks;
  h.chunk_bytes = chunk_bytes;
  h.slots = slots;
  h.packet_chunk_bytes = packet_bytes;
  h.packet_slots = packet_bytes == 0 ? 0 : 2;
  return h;
}

class Pairs : public ::testing::TestWithParam<int> {};

// Every pattern, then all of them mixed, on one world: 12 launches per world size.
TEST_P(Pairs, RandomGroupedPatternsDeliverExactly) {
  HostWorldConfig config;
  config.ranks = GetParam();
  config.workers = 4;
  HostWorld world(config);
  std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(config.ranks));
  std::vector<Pattern> order;
  for (Pattern p : {Pattern::all_to_all_v, Pattern::ring, Pattern::exchange, Pattern::one_sided})
    for (int k = 0; k < 2; ++k) order.push_back(p);
  for (int k = 0; k < 4; ++k) order.push_back(static_cast<Pattern>(rng() % 4));
  std::vector<Launch> launches;
  for (Pattern p : order) launches.push_back(make_launch(p, world, rng));
  const Status s = world.run(static_cast<int>(launches.size()), [&](int rank, int call, const HostBackend& be) {
    return host_pair_launch(be, world.pair_handle(rank), launches[static_cast<std::size_t>(call)].per_rank[static_cast<std::size_t>(rank)]);
  });
  ASSERT_EQ(s, Status::ok) << world.control().report();
  for (std::size_t c = 0; c < launches.size(); ++c) expect_delivered(launches[c], order[c], static_cast<int>(c));
}

INSTANTIATE_TEST_SUITE_P(Worlds, Pairs, ::testing::Values(1, 2, 3, 4, 8),
                         [](const ::testing::TestParamInfo<int>& i) {
                           std::string n = "W";
                           n += std::to_string(i.param);
                           return n;
                         });

TEST(PairLaunchPlan, SortsByRoundThenSenderAndKeepsThePairsOrder) {
  // Rank 1 of 4: sends to 3 (round 2) twice, receives from 0 (round 1), sends to 2 (round 1),
  // receives from 2 (round 3).
  char b[4] = {};
  const PairOp ops[] = {
      {b + 0, nullptr, 5, 3, PairDirection::send}, {nullptr, b + 1, 6, 0, PairDirection::recv},
      {b + 2, nullptr, 7, 2, PairDirection::send}, {b + 3, nullptr, 8, 3, PairDirection::send},
      {nullptr, b + 0, 9, 2, PairDirection::recv}};
  PairLaunch<kSmallPairOps> l;
  const char* what = "";
  ASSERT_EQ(make_pair_launch(plan_handle(1, 4, 4, 8), ops, 5, 8, l, &what), Status::ok) << what;
  ASSERT_EQ(l.count, 5);
  // Round 1: sender 0 (the receive from 0) before sender 1 (the send to 2); round 2: the two
  // sends to 3 in issue order; round 3: the receive from 2.
  const std::uint64_t want[] = {6, 7, 5, 8, 9};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(l.ops[i].bytes, want[i]) << "position " << i;
  // 2 + 2 + 2 + 2 + 3 chunks of 4 bytes, capped by the 8 workers allowed.
  EXPECT_EQ(l.workers, 8);
}

// Enough workers: every transfer its own (a rank's sends and receives to all peers progress
// together), extra ones by chunks, never more than the pair's slots. Too few: sends and
// receives on separate workers, each transfer whole on one.
TEST(PairLaunchPlan, WorkersPerTransfer) {
  char b[8] = {};
  // Rank 0 of 4: 1 chunk to 1, 20 chunks from 3, nothing to 2, 3 chunks to 3.
  const PairOp ops[] = {{b, nullptr, 4, 1, PairDirection::send},
                        {nullptr, b, 80, 3, PairDirection::recv},
                        {b, nullptr, 0, 2, PairDirection::send},
                        {b, nullptr, 12, 3, PairDirection::send}};
  PairLaunch<kSmallPairOps> l;
  const char* what = "";
  ASSERT_EQ(make_pair_launch(plan_handle(0, 4, 4, 5), ops, 4, 12, l, &what), Status::ok) << what;
  int total = 0;
  for (int i = 0; i < l.count; ++i) {
    const PairOp& o = l.ops[i];
    const std::uint64_t chunks = pair_chunks(o.bytes, 4);
    if (chunks == 0) continue;
    EXPECT_GE(o.workers, 1u);
    EXPECT_LE(o.workers, std::min<std::uint64_t>(chunks, 5)) << "op " << i;
    EXPECT_EQ(o.first_worker, static_cast<std::uint32_t>(total)) << "ranges follow each other";
    total += static_cast<int>(o.workers);
  }
  EXPECT_EQ(l.workers, total);
  EXPECT_EQ(total, 1 + 5 + 3);  // every transfer as many workers as it can use: 9 of 12

  std::vector<PairOp> many;
  for (int p = 1; p < 8; ++p) {
    many.push_back({b, nullptr, 8, p, PairDirection::send});
    many.push_back({nullptr, b, 8, p, PairDirection::recv});
  }
  ASSERT_EQ(make_pair_launch(plan_handle(0, 8, 4, 5), many.data(), static_cast<int>(many.size()), 4, l, &what), Status::ok);
  EXPECT_EQ(l.workers, 4);
  std::uint32_t last_send = 0;
  std::uint32_t first_recv = 4;
  for (int i = 0; i < l.count; ++i) {
    EXPECT_EQ(l.ops[i].workers, 1u);
    if (l.ops[i].direction == PairDirection::recv) {
      first_recv = std::min(first_recv, l.ops[i].first_worker);
    } else {
      last_send = std::max(last_send, l.ops[i].first_worker);
    }
  }
  EXPECT_LT(last_send, first_recv) << "sends and receives share no worker";
}

TEST(PairLaunchPlan, SelfTransfersBecomeCopiesFirst) {
  char s[8] = {};
  char d[8] = {};
  const PairOp ops[] = {{nullptr, d, 8, 0, PairDirection::recv}, {s, nullptr, 3, 1, PairDirection::send},
                        {s, nullptr, 8, 0, PairDirection::send}};
  PairLaunch<kSmallPairOps> l;
  const char* what = "";
  ASSERT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), ops, 3, 4, l, &what), Status::ok) << what;
  ASSERT_EQ(l.count, 2);
  EXPECT_EQ(l.ops[0].direction, PairDirection::copy);
  EXPECT_EQ(l.ops[0].src, s);
  EXPECT_EQ(l.ops[0].dst, d);
  EXPECT_EQ(l.ops[1].direction, PairDirection::send);

  // In place (the receive's buffer is the send's): nothing to move, no copy.
  const PairOp in_place[] = {{s, nullptr, 8, 0, PairDirection::send}, {nullptr, s, 8, 0, PairDirection::recv}};
  ASSERT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), in_place, 2, 4, l, &what), Status::ok) << what;
  EXPECT_EQ(l.count, 0);
}

TEST(PairLaunchPlan, RejectsWhatCannotMatch) {
  char b[8] = {};
  PairLaunch<kSmallPairOps> l;
  const char* what = "";
  const PairOp unmatched[] = {{b, nullptr, 8, 0, PairDirection::send}};
  EXPECT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), unmatched, 1, 4, l, &what), Status::bad_argument);
  EXPECT_NE(std::string(what).find("receive from it"), std::string::npos) << what;
  const PairOp sizes[] = {{b, nullptr, 8, 0, PairDirection::send}, {nullptr, b, 4, 0, PairDirection::recv}};
  EXPECT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), sizes, 2, 4, l, &what), Status::bad_argument);
  const PairOp peer[] = {{b, nullptr, 8, 2, PairDirection::send}};
  EXPECT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), peer, 1, 4, l, &what), Status::bad_argument);
  EXPECT_STREQ(what, "peer");
  std::vector<PairOp> many(kSmallPairOps + 1, PairOp{b, nullptr, 1, 1, PairDirection::send});
  EXPECT_EQ(make_pair_launch(plan_handle(0, 2, 64, 8), many.data(), static_cast<int>(many.size()), 4, l, &what),
            Status::bad_argument);
}

// A stall report names the point-to-point word a wait gave up on: which kind, which peer, which
// slot (the runtime's report uses these for words in the pair signal and packet areas).
TEST(PairProtocol, StallReportsNameTheWordAndThePeer) {
  const PairSignalLayout sig{4, 8, 2};
  EXPECT_EQ(name_pair_signal(sig, sig.ready(3, 5)), "point-to-point ready word from sender rank 3 (slot 5)");
  EXPECT_EQ(name_pair_signal(sig, sig.bytes(1, 0)), "point-to-point byte count from sender rank 1 (slot 0)");
  EXPECT_EQ(name_pair_signal(sig, sig.ack(2, 7)), "point-to-point ack from receiver rank 2 (slot 7)");
  EXPECT_EQ(name_pair_signal(sig, sig.packet_ack(3, 1)), "point-to-point packet ack from receiver rank 3 (packet slot 1)");
  EXPECT_NE(name_pair_signal(sig, sig.words()).find("past"), std::string::npos);
  const PairPacketLayout pk{4, 2, 16};
  EXPECT_EQ(name_pair_packet(pk, pk.index(2, 1, 9)), "point-to-point packet 9 from rank 2 (packet slot 1)");
  EXPECT_NE(name_pair_packet(pk, pk.packets()).find("past"), std::string::npos);
}

// A sender whose receiver never comes fills the pair's slots and then waits for an ack; the
// wait gives up with a report instead of hanging. The ranks that call nothing are not held.
TEST(PairProtocol, AMissingReceiverTimesOutWithAReport) {
  HostWorldConfig config;
  config.ranks = 3;
  config.workers = 2;
  config.timeout = std::chrono::milliseconds(300);
  HostWorld world(config);
  std::vector<std::byte> src(config.pair_chunk_bytes * (config.pair_slots + 1));
  PairLaunch<kSmallPairOps> sender;
  PairLaunch<kSmallPairOps> quiet;
  const char* what = "";
  const PairOp send[] = {{src.data(), nullptr, src.size(), 1, PairDirection::send}};
  ASSERT_EQ(make_pair_launch(world.pair_handle(0), send, 1, 2, sender, &what), Status::ok);
  ASSERT_EQ(make_pair_launch(world.pair_handle(1), send, 0, 2, quiet, &what), Status::ok);
  const Status s = world.run(1, [&](int rank, int, const HostBackend& be) {
    return host_pair_launch(be, world.pair_handle(rank), rank == 0 ? sender : quiet);
  });
  EXPECT_EQ(s, Status::aborted);
  EXPECT_NE(world.control().report().find("timed out"), std::string::npos) << world.control().report();
}

}  // namespace
}  // namespace purlin::snac
