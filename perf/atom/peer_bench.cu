// atom_bench OUTDIR peer [SRC DST]: the datapath between two GPUs (DESIGN.md sections 2 and 3;
// the paper's Figures 3, 6 and 9). Writes peer.csv and packet.csv.
//
//   peer.csv    a 256 MiB copy from GPU SRC's memory into GPU DST's, run on DST (pull: remote
//               reads, the throughput regime) and on SRC (push: remote writes), by the Atom at
//               every CTA count and pipeline depth, beside cudaMemcpyPeerAsync;
//   packet.csv  the latency regime's push: one thread on each GPU stores a packet (payload and
//               flag in one 128-bit store, snac/device_backend.cuh) into the other GPU's packet
//               buffer and polls its own for the answer; one-way latency = round trip / 2.
//
// With SRC == DST (one GPU; the default when fewer than two are visible) the same code measures
// the GPU against itself: a local copy and a packet through its own L2, a stand-in, not NVLink.
#include "bench_common.h"
#include "copy_sweep.cuh"
#include "purlin/atom.cuh"
#include "snac/device_backend.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace purlin::atom::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;
const std::vector<int> kAllCtas = {1, 2, 4, 8, 16, 32, 64, 132};
const std::vector<int> kDepthCtas = {8, 16, 32};

// Access from GPU `from` to GPU `to`'s memory. "" when granted (or the same GPU), else why not.
std::string enable_peer_access(int from, int to) {
  if (from == to) return "";
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || can == 0) {
    return "GPU " + std::to_string(from) + " cannot access GPU " + std::to_string(to);
  }
  if (cudaSetDevice(from) != cudaSuccess) return "cudaSetDevice failed";
  cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    e = cudaSuccess;
  }
  return e == cudaSuccess ? "" : cudaGetErrorString(e);
}

// Pull: the copy runs on the GPU that receives; push: on the GPU that sends.
enum class Direction { pull, push };
const char* name(Direction d) { return d == Direction::pull ? "pull" : "push"; }

struct CopyCtx {
  Csv& csv;
  Direction dir;
  int src_dev;
  int dst_dev;
  int run_dev;  // where the copy's kernel (or cudaMemcpyPeerAsync's stream) runs
  cudaStream_t stream;
  unsigned char* dst;
  const unsigned char* src;
  int max_smem;
};

void emit(CopyCtx& c, const char* impl, int threads, int stages, int stage_bytes, int ctas,
          const Timing& t, int regs = 0) {
  if (!t.ok) {
    std::printf("  %s %s T%d S%d B%d ctas %d: failed\n", name(c.dir), impl, threads, stages, stage_bytes, ctas);
    return;
  }
  const double gbps = kBytes / (t.us * 1e3);
  c.csv.row(name(c.dir), impl, c.src_dev, c.dst_dev, threads, stages, stage_bytes, ctas, kBytes, t.us, gbps,
            ctas > 0 ? gbps / ctas : 0.0, regs, t.per_graph, t.replays);
  std::printf("  %s %-20s T%-4d S%d B%-6d ctas %3d  %8.1f GB/s  %6.1f GB/s/CTA\n", name(c.dir), impl,
              threads, stages, stage_bytes, ctas, gbps, ctas > 0 ? gbps / ctas : 0.0);
}

template <class A>
void sweep(CopyCtx& c, const char* impl, const std::vector<int>& ctas_list) {
  using Cfg = typename A::config;
  time_sliced_copy<A>(c.dst, c.src, kBytes, c.max_smem, c.stream, ctas_list, [&](int ctas, const Timing& t, int regs) {
    emit(c, impl, Cfg::threads, Cfg::stages, Cfg::stage_bytes, ctas, t, regs);
  });
}

template <int... S>
void sweep_depths(CopyCtx& c, std::integer_sequence<int, S...>) {
  (sweep<Sm80Pipeline<Config<256, S + 1, 16384>>>(c, "sm80_pipeline", kDepthCtas), ...);
}

int run_copies(const std::string& outdir, int src_dev, int dst_dev, int max_smem) {
  Csv csv(outdir + "/peer.csv",
          "direction,impl,src_dev,dst_dev,threads,stages,stage_bytes,ctas,bytes,time_us,GBps,GBps_per_cta,"
          "regs,graph_calls,replays");
  if (!csv.good()) return 1;
  unsigned char* src = nullptr;
  unsigned char* dst = nullptr;
  if (cudaSetDevice(src_dev) != cudaSuccess || cudaMalloc(&src, kBytes) != cudaSuccess ||
      cudaMemset(src, 1, kBytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
      cudaSetDevice(dst_dev) != cudaSuccess || cudaMalloc(&dst, kBytes) != cudaSuccess) {
    std::fprintf(stderr, "peer: cannot allocate 2 x %zu MiB\n", kBytes >> 20);
    return 1;
  }
  int rc = 0;
  for (Direction dir : {Direction::pull, Direction::push}) {
    const int run_dev = dir == Direction::pull ? dst_dev : src_dev;
    cudaStream_t stream = nullptr;
    if (cudaSetDevice(run_dev) != cudaSuccess || cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
      rc = 1;
      continue;
    }
    CopyCtx c{csv, dir, src_dev, dst_dev, run_dev, stream, dst, src, max_smem};
    std::printf("%s: GPU %d -> GPU %d, %zu MiB, kernels on GPU %d\n", name(dir), src_dev, dst_dev,
                kBytes >> 20, run_dev);
    emit(c, "cudaMemcpyPeerAsync", 0, 0, 0, 0, time_graph([&](cudaStream_t s) {
           cudaMemcpyPeerAsync(dst, dst_dev, src, src_dev, kBytes, s);
         }, stream));
    sweep<NativeAtom<DefaultConfig>>(c, "native_default", kAllCtas);
    sweep_depths(c, std::make_integer_sequence<int, 8>{});
    cudaStreamDestroy(stream);
  }
  cudaFree(dst);
  cudaSetDevice(src_dev);
  cudaFree(src);
  return rc | (cudaGetLastError() == cudaSuccess ? 0 : 1);
}

// What one side of a ping-pong reports.
struct PingPongResult {
  unsigned long long ns = 0;     // the starter's time for all rounds
  unsigned long long wrong = 0;  // packets whose payload was not the one sent with their flag
  unsigned long long timed_out = 0;
};

// One thread plays one side: the starter sends round k's packet (payload k, flag base + k) into
// the other side's buffer and waits for the answer in its own; the responder waits, then
// answers. Each side polls only its own memory, as a latency-regime consumer does. A wait gives
// up after `timeout_ns`, so that a side that never ran costs a failed row, not a hang.
__global__ void packet_pingpong(snac::Packet* mine, snac::Packet* theirs, int rounds, bool starts,
                                std::uint32_t gpu_scope, snac::Flag base, unsigned long long timeout_ns,
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
    const snac::Flag flag = base + static_cast<snac::Flag>(k);
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

// One-way packet latency between GPUs a and b (which may be one GPU), median over 7 launches of
// `rounds` round trips each, after one launch to warm up. Negative on failure.
double packet_one_way_us(int a, int b, std::uint32_t gpu_scope, int rounds, unsigned long long* wrong) {
  constexpr int kLaunches = 8;
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
    packet_pingpong<<<1, 32, 0, sb>>>(packet_b, packet_a, rounds, false, gpu_scope, 0, 2'000'000'000ull,
                                      results + 1);
    ok = cudaSetDevice(a) == cudaSuccess;
    packet_pingpong<<<1, 32, 0, sa>>>(packet_a, packet_b, rounds, true, gpu_scope, 0, 2'000'000'000ull, results);
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
  constexpr int kRounds = 10000;
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
    csv.row(a, b, scope, kRounds, 7, us, wrong);
    std::printf("packet GPU %d <-> GPU %d, %s scope: %.3f us one way (median of 7 x %d round trips), %llu wrong\n",
                a, b, scope, us, kRounds, wrong);
    if (wrong != 0) rc = 1;
  }
  return rc;
}

}  // namespace

int run_peer_bench(const std::string& outdir, const Device& dev, int src_dev, int dst_dev) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || src_dev < 0 || dst_dev < 0 || src_dev >= count ||
      dst_dev >= count) {
    std::fprintf(stderr, "peer: GPUs %d and %d, but %d visible\n", src_dev, dst_dev, count);
    return 2;
  }
  for (const auto& [from, to] : {std::pair{src_dev, dst_dev}, std::pair{dst_dev, src_dev}}) {
    if (const std::string why = enable_peer_access(from, to); !why.empty()) {
      std::fprintf(stderr, "peer: %s\n", why.c_str());
      return 1;
    }
  }
  std::printf("peer: GPU %d and GPU %d (%s)%s\n", src_dev, dst_dev, dev.name.c_str(),
              src_dev == dst_dev ? ", one GPU against itself: a stand-in, not NVLink" : "");
  const int rc = run_copies(outdir, src_dev, dst_dev, dev.max_smem) | run_packets(outdir, src_dev, dst_dev);
  cudaSetDevice(src_dev);
  return rc;
}

}  // namespace purlin::atom::bench
