// DeviceStateConfig defaults and their environment overrides. Each default's reason is next to
// it; the arithmetic behind the staging and slot defaults is checked at compile time against
// the plan (snac/plan.h: a throughput slot holds one chunk stride per Program::slot_strides).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/env.h"
#include "base/log.h"
#include "layout/collectives.h"
#include "runtime/device_state.h"

namespace purlin::runtime {
namespace {

constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::size_t kKiB = 1024;

// 32 MiB per rank: a 16 MiB half holds 7 slots of an 8-rank AllReduce (8 ReduceScatter
// strides + 1 AllGather stride of the 256 KiB policy chunk = 2.25 MiB per slot), enough for
// the 4 consumer CTAs to pull while stagers fill the next slots, and 64 slots of a
// single-stride collective (AllGather). 32 MiB x 8 ranks of peer mappings is small next to a
// 141 GB H200.
constexpr std::size_t kDefaultStagingBytes = 32 * kMiB;
constexpr std::size_t kDefaultChunk = snac::Policy{}.chunk_bytes;
static_assert(kDefaultStagingBytes / 2 /
                  (kDefaultChunk * snac::Program<layout::AllReduce>::slot_strides(8)) ==
              7);

// 64 slots: what a half holds of the smallest slot (one 256 KiB stride, AllGather), so the
// signal arrays never cap a default ring (planner.h caps ring.slots at Handle::slots).
constexpr std::uint32_t kDefaultSlots = 64;
static_assert(kDefaultStagingBytes / 2 /
                  (kDefaultChunk * snac::Program<layout::AllGather>::slot_strides(8)) ==
              kDefaultSlots);

// 64 KiB of latency payload per (phase, half, producer): the policy's regime crossover, so
// every message the policy sends to the latency regime fits the packets. Costs 8 x ranks x
// 64 KiB of packets (16-byte packets carry 8 bytes; two phases, two halves).
constexpr std::size_t kDefaultPacketBytes = 64 * kKiB;
static_assert(kDefaultPacketBytes == snac::Policy{}.latency_max_bytes);

// Point-to-point (snac/pairs.h): 128 KiB chunks, 2 slots per (sender, receiver). What is in
// flight should stay in L2, where the receiver's pull finds it (over NVLink: the sender's L2
// serves the remote read): 8 ranks x 8 peers x 2 x 128 KiB is 16 MiB, 8 slots were 64 MiB.
// 8 ranks on one H100, grouped send/recv AllToAll: 2 slots 2444 us at 256 MiB against 3045
// with 8 and 2834 with 3, and alike up to 128 KiB (perf/snac/results/h100-20261206-latency,
// p2p_*). A chunk is a multiple of 256 bytes, so every slot starts as aligned as the block.
constexpr std::size_t kDefaultPairChunkBytes = 128 * kKiB;
constexpr std::uint32_t kDefaultPairSlots = 2;
// Transfers up to 16 KiB travel as packets (16 bytes carry 8), 4 slots per pair: 128 KiB of
// packet buffer per peer.
constexpr std::size_t kDefaultPairPacketBytes = 16 * kKiB;
constexpr std::uint32_t kDefaultPairPacketSlots = 4;
constexpr std::size_t kMinPairChunkBytes = 256;
constexpr std::size_t kMaxPairChunkBytes = 16 * kMiB;
constexpr std::uint32_t kMaxPairSlots = 64;

// 32 epoch slots: 4x the default policy's 8 workers, room for the sm_100 row's 16 and for
// PURLIN_ROLES overrides; DeviceState raises it to what the selected policy needs.
constexpr int kDefaultEpochSlots = 32;

// No timeout: like NCCL, a wait lasts until the peer arrives or the communicator is aborted;
// a finite default could fire on a healthy peer whose host thread is merely late.
constexpr std::uint64_t kDefaultTimeoutNs = 0;

// Waits check the abort word and deadline every 1024 polls and then sleep 100 ns. Sweep of
// 2026-12-03 (perf/snac/results/h200-20261203-all, 8 ranks sharing one H200, AllReduce 8 KiB
// per call in a graph): every 64 polls 31.9 us, every 1024 polls 25.2 us; no sleep at 64
// polls 31.8 us. Each check reads the host-mapped abort word across PCIe, so rarer checks
// free the pollers; a wait still sees an abort after at most 1024 more polls (not timed).
constexpr std::uint32_t kDefaultPollCheckEvery = snac::DeviceControl{}.check_every;
constexpr std::uint32_t kDefaultPollSleepNs = snac::DeviceControl{}.sleep_ns;
// Backing off between checks as well (every N polls, without reading the abort word): off by
// default, a knob for measuring how much polling crowds out the stores it waits for.
constexpr std::uint32_t kDefaultPollBackoffEvery = snac::DeviceControl{}.backoff_every;
// A check more rarely than every million polls would leave an abort unnoticed for
// milliseconds; a backoff over 1 ms would add that much to every wait.
constexpr std::int64_t kMaxPollCheckEvery = 1 << 20;
constexpr std::int64_t kMaxPollSleepNs = 1000000;

// Half of 1 MiB still gives a 64-rank AllReduce (65 strides per slot) chunks of ~7.9 KiB,
// about one Atom stage; below that, flag and ack traffic rivals the data.
constexpr std::size_t kMinStagingBytes = 1 * kMiB;
// Packet buffers cost 8 x ranks x packet_bytes; push stops paying well below 1 MiB.
constexpr std::size_t kMaxPacketBytes = 1 * kMiB;
constexpr std::size_t kPacketPayloadBytes = snac::kPacketPayload;
// ~31 years in nanoseconds fits a uint64 with room; more is surely a typo.
constexpr double kMaxTimeoutSeconds = 1e9;

std::size_t staging_from_env() {
  const std::int64_t v =
      env::get_int("PURLIN_STAGING_BYTES", static_cast<std::int64_t>(kDefaultStagingBytes));
  if (v < static_cast<std::int64_t>(kMinStagingBytes)) {
    PURLIN_WARN("PURLIN_STAGING_BYTES=%lld: must be at least %zu; using %zu",
                static_cast<long long>(v), kMinStagingBytes, kDefaultStagingBytes);
    return kDefaultStagingBytes;
  }
  // Even multiples of 256 keep the second half as aligned as the first.
  return (static_cast<std::size_t>(v) + 511) / 512 * 512;
}

// An integer from `name` within [lo, hi]; anything else is reported once and the fallback kept.
template <class T>
T bounded_from_env(const char* name, std::int64_t lo, std::int64_t hi, T fallback) {
  const std::int64_t v = env::get_int(name, static_cast<std::int64_t>(fallback));
  if (v < lo || v > hi) {
    PURLIN_WARN("%s=%lld: must be %lld to %lld; using %lld", name, static_cast<long long>(v),
                static_cast<long long>(lo), static_cast<long long>(hi),
                static_cast<long long>(fallback));
    return fallback;
  }
  return static_cast<T>(v);
}

std::uint64_t timeout_from_env() {
  // Seconds as a real number (base/env has integers only).
  const std::string text = env::get_string("PURLIN_TIMEOUT_S");
  if (text.empty()) return kDefaultTimeoutNs;
  errno = 0;
  char* end = nullptr;
  const double s = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(s) || s < 0 ||
      s > kMaxTimeoutSeconds) {
    PURLIN_WARN("PURLIN_TIMEOUT_S=%s: expected seconds from 0 (no timeout) to %.0f; using 0",
                text.c_str(), kMaxTimeoutSeconds);
    return kDefaultTimeoutNs;
  }
  // A positive value never rounds to 0, which would mean "no timeout".
  const auto ns = static_cast<std::uint64_t>(std::llround(s * 1e9));
  return s > 0 && ns == 0 ? 1 : ns;
}

}  // namespace

DeviceStateConfig DeviceStateConfig::from_env() {
  DeviceStateConfig c;
  c.staging_bytes = staging_from_env();
  c.slots = kDefaultSlots;
  // 0 turns the latency regime off.
  c.packet_bytes = bounded_from_env<std::size_t>("PURLIN_PACKET_BYTES", 0, kMaxPacketBytes,
                                                 kDefaultPacketBytes);
  c.pair_chunk_bytes = bounded_from_env<std::size_t>("PURLIN_P2P_CHUNK_BYTES", kMinPairChunkBytes,
                                                     kMaxPairChunkBytes, kDefaultPairChunkBytes) /
                       256 * 256;
  c.pair_slots = bounded_from_env<std::uint32_t>("PURLIN_P2P_SLOTS", 1, kMaxPairSlots, kDefaultPairSlots);
  // 0: no packets, every transfer staged.
  c.pair_packet_bytes = bounded_from_env<std::size_t>("PURLIN_P2P_PACKET_BYTES", 0, kMaxPacketBytes,
                                                      kDefaultPairPacketBytes) /
                        kPacketPayloadBytes * kPacketPayloadBytes;
  c.pair_packet_slots = c.pair_packet_bytes == 0 ? 0 : kDefaultPairPacketSlots;
  // A measuring knob, rank-local like NCCL_MAX_CTAS: a launch's CTA count is its own business.
  c.pair_max_workers = bounded_from_env<int>("PURLIN_P2P_CTAS", 0, kMaxPairSlots, 0);
  c.epoch_slots = kDefaultEpochSlots;
  c.timeout_ns = timeout_from_env();
  c.poll_check_every =
      bounded_from_env<std::uint32_t>("PURLIN_POLL_CHECK_EVERY", 1, kMaxPollCheckEvery,
                                      kDefaultPollCheckEvery);
  c.poll_sleep_ns =
      bounded_from_env<std::uint32_t>("PURLIN_POLL_SLEEP_NS", 0, kMaxPollSleepNs,
                                      kDefaultPollSleepNs);
  c.poll_backoff_every =
      bounded_from_env<std::uint32_t>("PURLIN_POLL_BACKOFF_EVERY", 0, kMaxPollCheckEvery,
                                      kDefaultPollBackoffEvery);
  return c;
}

}  // namespace purlin::runtime
