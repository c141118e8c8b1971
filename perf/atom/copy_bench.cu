// Copy of 256 MiB: bandwidth vs CTA count and pipeline configuration, against cudaMemcpyAsync and
// a plain grid-stride uint4 kernel with the same CTA count. Writes copy.csv.
#include "bench_common.h"
#include "copy_sweep.cuh"
#include "purlin/atom.cuh"

#include <cstdio>
#include <utility>
#include <vector>

namespace purlin::atom::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;
const std::vector<int> kAllCtas = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 132};
const std::vector<int> kSomeCtas = {8, 16, 32, 64, 132};

// The baseline of the issue: 256 threads, one uint4 per thread per iteration, grid-stride.
__global__ void __launch_bounds__(256) plain_copy(uint4* dst, const uint4* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{256} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * 256) {
    dst[i] = src[i];
  }
}

struct Ctx {
  const Device& dev;
  Csv& csv;
  cudaStream_t stream;
  unsigned char* dst;
  unsigned char* src;
};

void emit(Ctx& c, const char* impl, int threads, int stages, int stage_bytes, int ctas,
          std::size_t misalign, const Timing& t, int regs = 0) {
  if (!t.ok) {
    std::printf("  %s T%d S%d B%d ctas %d: failed\n", impl, threads, stages, stage_bytes, ctas);
    return;
  }
  const double gbps = kBytes / (t.us * 1e3);
  c.csv.row(impl, threads, stages, stage_bytes, ctas, misalign, kBytes, t.us, gbps,
            ctas > 0 ? gbps / ctas : 0.0, regs, t.per_graph, t.replays);
  std::printf("  %-26s T%-4d S%d B%-6d ctas %3d  %8.1f GB/s  %6.1f GB/s/CTA\n", impl, threads,
              stages, stage_bytes, ctas, gbps, ctas > 0 ? gbps / ctas : 0.0);
}

template <class A>
void sweep(Ctx& c, const char* impl, const std::vector<int>& ctas_list, std::size_t misalign = 0) {
  using Cfg = typename A::config;
  time_sliced_copy<A>(c.dst + misalign, c.src, kBytes, c.dev.max_smem, c.stream, ctas_list,
                      [&](int ctas, const Timing& t, int regs) {
                        emit(c, impl, Cfg::threads, Cfg::stages, Cfg::stage_bytes, ctas, misalign, t, regs);
                      });
}

template <int Threads, int StageBytes, int... S>
void sweep_depths(Ctx& c, std::integer_sequence<int, S...>, const std::vector<int>& ctas) {
  (sweep<Sm80Pipeline<Config<Threads, S + 1, StageBytes>>>(c, "sm80_pipeline", ctas), ...);
}

template <bool BulkStore, int StageBytes, int... S>
void sweep_bulk(Ctx& c, std::integer_sequence<int, S...>, const std::vector<int>& ctas) {
  (sweep<Sm90Bulk<Config<256, S, StageBytes>, BulkStore>>(
       c, BulkStore ? "sm90_bulk_store" : "sm90_bulk", ctas),
   ...);
}

}  // namespace

int run_copy_bench(const std::string& outdir, const Device& dev) {
  Csv csv(outdir + "/copy.csv",
          "impl,threads,stages,stage_bytes,ctas,dst_misalign,bytes,time_us,GBps,GBps_per_cta,regs,"
          "graph_calls,replays");
  if (!csv.good()) return 1;
  unsigned char *dst = nullptr, *src = nullptr;
  if (cudaMalloc(&dst, kBytes + 256) != cudaSuccess || cudaMalloc(&src, kBytes + 256) != cudaSuccess) {
    return 1;
  }
  cudaMemset(src, 1, kBytes + 256);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  Ctx c{dev, csv, stream, dst, src};

  std::printf("copy of %zu MiB on %s (%d SMs)\n", kBytes >> 20, dev.name.c_str(), dev.sms);
  emit(c, "cudaMemcpyAsync", 0, 0, 0, 0, 0, time_graph([&](cudaStream_t s) {
         cudaMemcpyAsync(dst, src, kBytes, cudaMemcpyDeviceToDevice, s);
       }, stream));
  for (int ctas : kAllCtas) {
    emit(c, "plain_uint4", 256, 0, 0, ctas, 0, time_graph([&](cudaStream_t s) {
           plain_copy<<<ctas, 256, 0, s>>>(reinterpret_cast<uint4*>(dst),
                                           reinterpret_cast<const uint4*>(src), kBytes / 16);
         }, stream));
  }
  sweep<GenericVector<Config<256, 1, 256, 4>>>(c, "generic_vector", kAllCtas);
  sweep<GenericVector<Config<256, 1, 256, 8>>>(c, "generic_vector", kAllCtas);
  sweep<GenericVector<Config<512, 1, 256, 4>>>(c, "generic_vector", kSomeCtas);
  // The main sweep: depth 1..8 with 16 KiB stages at every CTA count; 8 and 32 KiB stages and
  // 512 threads at a few.
  sweep_depths<256, 16384>(c, std::make_integer_sequence<int, 8>{}, kAllCtas);
  sweep_depths<256, 8192>(c, std::make_integer_sequence<int, 8>{}, kSomeCtas);
  sweep_depths<256, 32768>(c, std::make_integer_sequence<int, 8>{}, kSomeCtas);
  sweep<Sm80Pipeline<Config<512, 4, 16384>>>(c, "sm80_pipeline", kSomeCtas);
  sweep<Sm80Pipeline<Config<512, 8, 16384>>>(c, "sm80_pipeline", kSomeCtas);
  sweep<Sm80Pipeline<Config<128, 8, 16384>>>(c, "sm80_pipeline", kSomeCtas);
  sweep<NativeAtom<DefaultConfig>>(c, "native_default", kAllCtas);
  // The price of a destination misaligned relative to the source (realignment).
  sweep<NativeAtom<DefaultConfig>>(c, "native_default", kSomeCtas, 5);
  sweep<GenericVector<Config<256, 1, 256, 4>>>(c, "generic_vector", kSomeCtas, 5);
  // The bulk-copy candidates last: new hardware paths, so a fault there costs no other data.
  if (dev.bulk) {
    sweep_bulk<false, 16384>(c, std::integer_sequence<int, 2, 4, 8>{}, kAllCtas);
    sweep_bulk<false, 32768>(c, std::integer_sequence<int, 2, 4, 6>{}, kSomeCtas);
    sweep_bulk<true, 16384>(c, std::integer_sequence<int, 2, 4, 8>{}, kAllCtas);
    sweep_bulk<true, 32768>(c, std::integer_sequence<int, 2, 4, 6>{}, kSomeCtas);
  }

  cudaStreamDestroy(stream);
  cudaFree(dst);
  cudaFree(src);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace purlin::atom::bench
