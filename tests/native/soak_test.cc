// Long runs (issue 13): many calls with data that changes from one call to the next, checked
// exactly, so that a torn packet, a stale flag or a slot reused too early shows as a wrong
// byte; and thousands of mixed calls on three communicators after which the device memory is
// back where it started. Call counts come from the environment so that the default run stays
// short and the acceptance run can ask for more:
//
//   PURLIN_STRESS_CALLS  latency-regime calls of Soak.LatencyPacketsChangingData (default 96)
//   PURLIN_SOAK_CALLS    calls of Soak.MixedCallsOnThreeComms (default 240)
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "cases.h"
#include "harness.h"
#include "values.h"

namespace purlin::native_test {
namespace {

int env_count(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  const long n = std::strtol(v, nullptr, 10);
  return n > 0 ? static_cast<int>(n) : fallback;
}

// The collectives with a latency regime on ranks sharing one GPU and the largest count of each
// that stays in it (src/policy/table.h, sm_90 row: one hop up to 64 KiB of whole buffer for the
// compositions, packets up to a 4 KiB partition for the others).
struct LatencyShape {
  Coll coll;
  std::size_t max_bytes;  // of NCCL's count argument, in bytes
};
constexpr LatencyShape kLatency[] = {
    {Coll::kAllReduce, 64 * 1024}, {Coll::kBroadcast, 64 * 1024}, {Coll::kReduce, 64 * 1024},
    {Coll::kAllGather, 4 * 1024},  {Coll::kReduceScatter, 4 * 1024}, {Coll::kAllToAll, 4 * 1024},
};

// Packets the call moves between ranks if it runs as the layouts say (every reader gets one
// 8-byte payload per packet): what the stress run counts, not what it checks.
std::uint64_t packets_of(const Case& c, int n) {
  const std::uint64_t words = (c.count * type_bytes(c.type) + 7) / 8;
  const auto u = static_cast<std::uint64_t>(n);
  switch (c.coll) {
    case Coll::kAllReduce: return u * u * words;  // one hop: every rank's whole buffer to every rank
    case Coll::kAllGather: return u * u * words;
    case Coll::kReduceScatter: return u * u * words;
    case Coll::kAllToAll: return u * u * words;
    case Coll::kBroadcast: return u * words;
    case Coll::kReduce: return u * words;
    default: return 0;
  }
}

// Latency-regime calls of 8 ranks back to back on one communicator, each with a new salt (so
// new input values), a random type, op, count, placement and root.
TEST(Soak, LatencyPacketsChangingData) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  constexpr int n = 8;
  std::string error;
  World* w = World::shared(n, &error);
  ASSERT_NE(w, nullptr) << error;
  const int calls = env_count("PURLIN_STRESS_CALLS", 96);
  std::mt19937_64 rng(20261206);
  CaseLog log;
  std::uint64_t packets = 0;
  for (int i = 0; i < calls; ++i) {
    const LatencyShape& shape = kLatency[rng() % std::size(kLatency)];
    Case c;
    c.coll = shape.coll;
    c.type = kAllTypes[rng() % kAllTypes.size()];
    c.op = reduces(c.coll) ? kAllOps[rng() % kOps] : Op::kSum;
    const std::size_t most = shape.max_bytes / type_bytes(c.type);
    c.count = 1 + rng() % most;
    c.in_place = rng() % 2 == 0;
    c.root = static_cast<int>(rng() % n);
    c.salt = static_cast<std::size_t>(rng() % (std::uint64_t{1} << 40));
    if (!log.run(w->runner(), c)) break;
    packets += packets_of(c, n);
  }
  EXPECT_EQ(log.failures(), 0);
  std::printf("[ stress ] %d calls, %llu packets, %d wrong\n", log.cases(),
              static_cast<unsigned long long>(packets), log.failures());
  RecordProperty("packets", std::to_string(packets));
}

// A random case for a world of n ranks: any collective, type, op, placement, root, V pattern
// and salt, and a count from 0 to 1 MiB spread over the powers of two, so that both regimes
// and their crossover come round.
Case random_case(std::mt19937_64& rng, int n) {
  Case c;
  c.coll = static_cast<Coll>(rng() % kColls);
  c.type = kAllTypes[rng() % kAllTypes.size()];
  c.op = reduces(c.coll) ? kAllOps[rng() % kOps] : Op::kSum;
  const std::size_t es = type_bytes(c.type);
  const std::size_t bytes = (std::size_t{1} << (rng() % 21)) + rng() % 64;
  c.count = rng() % 16 == 0 ? 0 : (bytes + es - 1) / es;
  c.in_place = rng() % 3 == 0;
  c.root = static_cast<int>(rng() % static_cast<std::uint64_t>(n));
  c.v_displs = rng() % 2 == 0;
  c.v_seed = static_cast<int>(rng() % 3);
  c.salt = static_cast<std::size_t>(rng() % (std::uint64_t{1} << 40));
  return c;
}

// Free memory over GPUs 0..gpus-1, the GPUs the worlds' ranks are placed on.
std::size_t free_device_bytes(int gpus) {
  std::size_t sum = 0;
  for (int d = 0; d < gpus; ++d) {
    const ScopedDevice on(d);
    std::size_t free = 0;
    std::size_t total = 0;
    sum += cudaMemGetInfo(&free, &total) == cudaSuccess ? free : 0;
  }
  return sum;
}

// Communicators of 8, 4 and 2 ranks, created together, used in random turn with random cases,
// then destroyed: every call exact, and the GPU's free memory back to its level before they
// were created. A first round of the same shape (created, one call each, destroyed) comes
// before the measurement, so that what the CUDA runtime keeps after first use (module code, a
// grown local-memory reservation) is not counted as lost.
TEST(Soak, MixedCallsOnThreeComms) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  constexpr int kSizes[] = {8, 4, 2};
  const int calls = env_count("PURLIN_SOAK_CALLS", 240);
  std::string placement;
  const int gpus = world_gpus(&placement);
  ASSERT_GT(gpus, 0) << placement;
  std::mt19937_64 rng(1206);
  CaseLog log;
  std::size_t before = 0;
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      ASSERT_EQ(synchronize_devices(gpus), cudaSuccess);
      before = free_device_bytes(gpus);
    }
    std::unique_ptr<World> worlds[3];
    for (int k = 0; k < 3; ++k) {
      std::string error;
      worlds[k] = World::create(kSizes[k], &error);
      ASSERT_NE(worlds[k], nullptr) << "world of " << kSizes[k] << ": " << error;
    }
    const int n_calls = round == 0 ? 3 : calls;
    for (int i = 0; i < n_calls; ++i) {
      const int k = round == 0 ? i : static_cast<int>(rng() % 3);
      if (!log.run(worlds[k]->runner(), random_case(rng, kSizes[k]))) break;
    }
    if (log.failures() != 0) break;
  }
  EXPECT_EQ(log.failures(), 0);
  ASSERT_EQ(synchronize_devices(gpus), cudaSuccess);
  const std::size_t after = free_device_bytes(gpus);
  const long long lost = static_cast<long long>(before) - static_cast<long long>(after);
  std::printf("[ soak ] %d calls on 3 communicators, %d wrong, device memory %lld bytes below its "
              "level before them\n",
              log.cases(), log.failures(), lost);
  // The driver hands memory out in 2 MiB pages, per GPU; anything the communicators keep is more.
  EXPECT_LE(lost, (2LL << 20) * gpus) << "device memory not returned: " << lost << " bytes";
}

}  // namespace
}  // namespace purlin::native_test
