// packet_latency OUTDIR [A B]: the latency regime's push between two GPUs (DESIGN.md section 2;
// the paper's Figure 9). One thread on each GPU stores a packet (payload and flag in one 128-bit
// store: store_packet_scoped, src/snac/device_backend.cuh, the store every latency-regime producer
// makes) into the other GPU's packet buffer and polls its own buffer (load_packet_scoped) for the
// answer; one-way latency = round trip / 2. Writes OUTDIR/packet.csv (perf/snac/README.md).
//
// GPUs 0 and 1 by default, 0 and 0 with one GPU: then both sides are one GPU, a stand-in that
// says nothing about NVLink, measured at system scope (as between GPUs) and at GPU scope (as
// between threads of one process on one GPU).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "atom/bench_common.h"  // Csv, enable_peer_access
#include "snac/device_backend.cuh"

namespace {

using purlin::atom::bench::Csv;
using purlin::atom::bench::enable_peer_access;
namespace snac = purlin::snac;

constexpr int kTimedLaunches = 7;
constexpr int kRounds = 10000;

// What one side of a ping-pong reports.
struct PingPongResult {
  unsigned long long ns = 0;     // the starter's time for all rounds
  unsigned long long wrong = 0;  // packets whose payload was not the one sent with their flag
  unsigned long long timed_out = 0;
};

// One thread plays one side: the starter sends round k's packet (payload k, flag k) into
// the other side's buffer and waits for the answer in its own; the responder waits, then
// answers. Each side polls only its own memory, as a latency-regime consumer does. A wait gives
// up after `timeout_ns`, so that a side that never ran costs a failed row, not a hang.
__global__ void packet_pingpong(snac::Packet* mine, snac::Packet* theirs, int rounds, bool starts,
                                std::uint32_t gpu_scope, unsigned long long timeout_ns,
                                PingPongResult* result) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  PingPongResult r;
  const unsigned long long t0 = snac::globaltimer();
  auto await = [&](snac::Flag flag, std::uint64_t payload) {
    for (;;) {
      const snac::Packet p = snac::load_packet_scoped(mine, gpu_scope);
      if (p.flag >= flag) {
        r.wrong += p.payload != payload ? 1 : 0;
        return true;
      }
      if (snac::globaltimer() - t0 > timeout_ns) return false;
    }
  };
  for (int k = 1; k <= rounds; ++k) {
    const auto flag = static_cast<snac::Flag>(k);
    if (!starts && !await(flag, static_cast<std::uint64_t>(k))) {
      r.timed_out = 1;
      break;
    }
    snac::store_packet_scoped(theirs, static_cast<std::uint64_t>(k), flag, gpu_scope);
    if (starts && !await(flag, static_cast<std::uint64_t>(k))) {
      r.timed_out = 1;
      break;
    }
  }
  r.ns = snac::globaltimer() - t0;
  *result = r;
}

// One-way packet latency between GPUs a and b (which may be one GPU), median over kTimedLaunches
// launches of `rounds` round trips each, after one launch to warm up. Negative on failure.
double packet_one_way_us(int a, int b, std::uint32_t gpu_scope, int rounds, unsigned long long* wrong) {
  constexpr int kLaunches = kTimedLaunches + 1;
  snac::Packet* packet_a = nullptr;  // a's buffer, written by b
  snac::Packet* packet_b = nullptr;
  PingPongResult* results = nullptr;  // a's and b's, mapped host memory: readable from both GPUs
  cudaStream_t sa = nullptr, sb = nullptr;
  bool ok = cudaSetDevice(a) == cudaSuccess && cudaMalloc(&packet_a, sizeof(snac::Packet)) == cudaSuccess &&
            cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking) == cudaSuccess &&
            cudaSetDevice(b) == cudaSuccess && cudaMalloc(&packet_b, sizeof(snac::Packet)) == cudaSuccess &&
            cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking) == cudaSuccess &&
            cudaHostAlloc(&results, 2 * sizeof(PingPongResult), cudaHostAllocMapped | cudaHostAllocPortable) ==
                cudaSuccess;
  std::vector<double> one_way;
  *wrong = 0;
  for (int launch = 0; ok && launch < kLaunches; ++launch) {
    // Fresh buffers each launch, so the flags start from 0 again.
    ok = cudaSetDevice(a) == cudaSuccess && cudaMemset(packet_a, 0, sizeof(snac::Packet)) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess && cudaSetDevice(b) == cudaSuccess &&
         cudaMemset(packet_b, 0, sizeof(snac::Packet)) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess;
    if (!ok) break;
    // The responder first: both must run at once, and the starter's clock starts with its first
    // store, so a responder that starts late only shows as a slower first round.
    packet_pingpong<<<1, 32, 0, sb>>>(packet_b, packet_a, rounds, false, gpu_scope, 2'000'000'000ull,
                                      results + 1);
    ok = cudaSetDevice(a) == cudaSuccess;
    packet_pingpong<<<1, 32, 0, sa>>>(packet_a, packet_b, rounds, true, gpu_scope, 2'000'000'000ull, results);
    ok = ok && cudaGetLastError() == cudaSuccess && cudaStreamSynchronize(sa) == cudaSuccess &&
         cudaStreamSynchronize(sb) == cudaSuccess;
    if (!ok || results[0].timed_out != 0 || results[1].timed_out != 0) {
      ok = false;
      break;
    }
    *wrong += results[0].wrong + results[1].wrong;
    if (launch > 0) one_way.push_back(results[0].ns / 1e3 / (2.0 * rounds));
  }
  if (sa != nullptr) cudaStreamDestroy(sa);
  if (sb != nullptr) cudaStreamDestroy(sb);
  cudaFree(packet_a);
  cudaFree(packet_b);
  cudaFreeHost(results);
  if (!ok || one_way.empty()) return -1;
  std::sort(one_way.begin(), one_way.end());
  return one_way[one_way.size() / 2];
}

int run_packets(const std::string& outdir, int a, int b) {
  Csv csv(outdir + "/packet.csv", "gpu_a,gpu_b,scope,rounds,launches,one_way_us,wrong");
  if (!csv.good()) return 1;
  int rc = 0;
  // System scope is what packets between GPUs (or processes) use; GPU scope is valid only when
  // both sides are on one GPU, where it is what ranks that are threads of one process use.
  for (std::uint32_t gpu_scope : {0u, 1u}) {
    if (gpu_scope != 0 && a != b) continue;
    unsigned long long wrong = 0;
    const double us = packet_one_way_us(a, b, gpu_scope, kRounds, &wrong);
    const char* scope = gpu_scope != 0 ? "gpu" : "sys";
    if (us < 0) {
      std::printf("packet GPU %d <-> GPU %d, %s scope: failed (a CUDA error or a side that never ran)\n", a, b,
                  scope);
      rc = 1;
      continue;
    }
    csv.row(a, b, scope, kRounds, kTimedLaunches, us, wrong);
    std::printf("packet GPU %d <-> GPU %d, %s scope: %.3f us one way (median of %d x %d round trips), %llu wrong\n",
                a, b, scope, us, kTimedLaunches, kRounds, wrong);
    if (wrong != 0) rc = 1;
    if (a != b && gpu_scope == 0) {
      std::printf("target (issue 15, NVLink): under 1.5 us one way: %s\n", us < 1.5 ? "met" : "missed");
    }
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [A B]\n", argv[0]);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  const int a = argc > 2 ? std::atoi(argv[2]) : 0;
  const int b = argc > 3 ? std::atoi(argv[3]) : (count > 1 ? 1 : 0);
  if (a < 0 || b < 0 || a >= count || b >= count) {
    std::fprintf(stderr, "GPUs %d and %d, but %d visible\n", a, b, count);
    return 2;
  }
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    if (const std::string why = enable_peer_access(from, to); !why.empty()) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 1;
    }
  }
  if (a == b) std::printf("GPU %d against itself: a stand-in for a peer, not NVLink\n", a);
  return run_packets(argv[1], a, b);
}
