// Reduce (sum) of 8 bf16 sources vs CTA count and configuration, against the HBM limit: 9 buffers
// of traffic (8 read, 1 written) at the traffic rate cudaMemcpyAsync reaches in the same run (2x
// its payload rate: it reads and writes every byte). Writes reduce.csv.
#include "bench_common.h"
#include "atom/sliced_kernels.cuh"
#include "purlin/atom.cuh"

#include <cuda_bf16.h>

#include <cstdio>
#include <vector>

namespace purlin::atom::bench {
namespace {

constexpr int kSources = 8;
constexpr std::size_t kBytes = std::size_t{128} << 20;  // per source and for the output
const std::vector<int> kCtas = {8, 16, 24, 32, 48, 64, 96, 132};

using SourcePtrs = SourceTable<kSources>;
__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, int seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    p[i] = __float2bfloat16_rn(1.0f + static_cast<float>((i + seed) % 7) / 8.0f);
  }
}

struct Ctx {
  const Device& dev;
  Csv& csv;
  cudaStream_t stream;
  void* dst;
  SourcePtrs src;
  double memcpy_gbps;
};

template <class A>
void sweep(Ctx& c, const char* impl, std::size_t misalign = 0) {
  using Cfg = typename A::config;
  if (A::workspace_bytes > static_cast<std::size_t>(c.dev.max_smem)) return;
  auto* const kernel = sliced_reduce<A, __nv_bfloat16, op::Sum, kSources>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(A::workspace_bytes)) != cudaSuccess) {
    return;
  }
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, kernel);
  // Misaligned: sources at different 2-byte offsets (element-aligned, not 16-byte aligned), so
  // every source is realigned; the output stays aligned.
  SourcePtrs src = c.src;
  for (int s = 0; misalign != 0 && s < kSources; ++s) {
    src.p[s] = static_cast<const char*>(src.p[s]) + 2 * ((s + 1) % 8);
  }
  for (int ctas : kCtas) {
    const Timing t = time_graph(
        [&](cudaStream_t s) {
          kernel<<<ctas, A::threads, A::workspace_bytes, s>>>(c.dst, src, kSources, kBytes, {});
        },
        c.stream);
    if (!t.ok) {
      std::printf("  %s ctas %d: failed\n", impl, ctas);
      continue;
    }
    const double out = kBytes / (t.us * 1e3);
    const double traffic = (kSources + 1) * out;
    const double fraction = traffic / (2 * c.memcpy_gbps);
    c.csv.row(impl, Cfg::threads, Cfg::stages, Cfg::stage_bytes, Cfg::unroll, Cfg::pipeline_sources, ctas, misalign,
              kSources, kBytes, t.us, out, traffic, c.memcpy_gbps, fraction, attr.numRegs,
              t.per_graph, t.replays);
    std::printf("  %-22s T%-4d S%d B%-6d U%d P%-2d ctas %3d  out %7.1f GB/s  traffic %7.1f GB/s  %5.1f%% of HBM\n",
                impl, Cfg::threads, Cfg::stages, Cfg::stage_bytes, Cfg::unroll, Cfg::pipeline_sources,
                ctas, out, traffic,
                100 * fraction);
  }
}

}  // namespace

int run_reduce_bench(const std::string& outdir, const Device& dev) {
  Csv csv(outdir + "/reduce.csv",
          "impl,threads,stages,stage_bytes,unroll,pipeline_sources,ctas,src_misalign,sources,bytes_per_source,"
          "time_us,out_GBps,traffic_GBps,memcpy_GBps,hbm_fraction,regs,graph_calls,replays");
  if (!csv.good()) return 1;
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  void* dst = nullptr;
  SourcePtrs src{};
  if (cudaMalloc(&dst, kBytes + 256) != cudaSuccess) return 1;
  for (int s = 0; s < kSources; ++s) {
    void* p = nullptr;
    if (cudaMalloc(&p, kBytes + 256) != cudaSuccess) return 1;
    fill_bf16<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), (kBytes + 256) / 2, s);
    src.p[s] = p;
  }
  // The HBM reference: cudaMemcpyAsync of 256 MiB, measured now.
  const std::size_t memcpy_bytes = std::size_t{256} << 20;
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, memcpy_bytes);
  cudaMalloc(&b, memcpy_bytes);
  const Timing m = time_graph([&](cudaStream_t s) {
    cudaMemcpyAsync(b, a, memcpy_bytes, cudaMemcpyDeviceToDevice, s);
  }, stream);
  cudaFree(a);
  cudaFree(b);
  if (!m.ok) return 1;
  Ctx c{dev, csv, stream, dst, src, memcpy_bytes / (m.us * 1e3)};
  std::printf("reduce of %d bf16 sources x %zu MiB; cudaMemcpyAsync %.1f GB/s -> HBM limit %.1f GB/s "
              "of output\n",
              kSources, kBytes >> 20, c.memcpy_gbps, 2 * c.memcpy_gbps / (kSources + 1));

  sweep<GenericVector<Config<256, 1, 256, 2>>>(c, "generic_vector");
  sweep<GenericVector<Config<256, 1, 256, 4>>>(c, "generic_vector");
  sweep<GenericVector<Config<512, 1, 256, 2>>>(c, "generic_vector");
  sweep<Sm80Pipeline<Config<256, 8, 16384, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<256, 4, 32768, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<256, 6, 32768, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<256, 3, 65536, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<512, 4, 32768, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<512, 6, 32768, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<512, 3, 65536, 4, kSources>>>(c, "sm80_pipeline");
  sweep<Sm80Pipeline<Config<512, 4, 49152, 4, kSources>>>(c, "sm80_pipeline");
  // The register path of the pipeline Atoms (Config::pipeline_sources below 8), by loads in flight.
  sweep<Sm80Pipeline<Config<256, 8, 16384, 2, 1>>>(c, "sm80_registers");
  sweep<Sm80Pipeline<Config<256, 8, 16384, 4, 1>>>(c, "sm80_registers");
  sweep<Sm80Pipeline<Config<256, 8, 16384, 8, 1>>>(c, "sm80_registers");
  sweep<Sm80Pipeline<Config<512, 8, 16384, 2, 1>>>(c, "sm80_registers");
  sweep<Sm80Pipeline<Config<512, 8, 16384, 4, 1>>>(c, "sm80_registers");
  sweep<NativeAtom<DefaultConfig>>(c, "native_default");
  sweep<Sm80Pipeline<Config<512, 6, 32768, 4, kSources>>>(c, "sm80_pipeline", 1);
  // The bulk-copy candidates last: new hardware paths, so a fault there costs no other data.
  if (dev.bulk) {
    sweep<Sm90Bulk<Config<256, 4, 32768, 4, kSources>>>(c, "sm90_bulk");
    sweep<Sm90Bulk<Config<512, 6, 32768, 4, kSources>>>(c, "sm90_bulk");
    sweep<Sm90Bulk<Config<256, 3, 65536, 4, kSources>>>(c, "sm90_bulk");
  }

  cudaStreamDestroy(stream);
  for (const void* p : src.p) cudaFree(const_cast<void*>(p));
  cudaFree(dst);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace purlin::atom::bench
