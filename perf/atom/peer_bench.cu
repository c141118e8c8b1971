// atom_bench OUTDIR peer [SRC DST]: the Atom between two GPUs (DESIGN.md section 3; the paper's
// Figures 3 and 6). Writes peer.csv: a 256 MiB copy from GPU SRC's memory into GPU DST's, run on
// DST (pull: remote reads, the throughput regime) and on SRC (push: remote writes), by the Atom
// at every CTA count and pipeline depth, beside cudaMemcpyPeerAsync. The latency regime's packet
// push between two GPUs is perf/snac/packet_latency.cu.
//
// With SRC == DST (one GPU; the default when fewer than two are visible) the same code measures
// the GPU against itself: a local copy, a stand-in, not NVLink.
#include "bench_common.h"
#include "copy_sweep.cuh"
#include "purlin/atom.cuh"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace purlin::atom::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;
const std::vector<int> kAllCtas = {1, 2, 4, 8, 16, 32, 64, 132};
const std::vector<int> kDepthCtas = {8, 16, 32};

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

int run_copies(const std::string& outdir, int src_dev, int dst_dev) {
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
    cudaFree(dst);  // cudaFree(nullptr) does nothing
    cudaFree(src);
    return 1;
  }
  int rc = 0;
  for (Direction dir : {Direction::pull, Direction::push}) {
    const int run_dev = dir == Direction::pull ? dst_dev : src_dev;
    cudaStream_t stream = nullptr;
    int max_smem = 0;  // the running GPU's opt-in shared memory per block
    if (cudaSetDevice(run_dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, run_dev) != cudaSuccess ||
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
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
  const int rc = run_copies(outdir, src_dev, dst_dev);
  cudaSetDevice(src_dev);
  return rc;
}

}  // namespace purlin::atom::bench
