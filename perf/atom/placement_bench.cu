// Where the CTAs of a copy land and how fast each one is. The copy sweep shows 12, 24 and 48 CTAs
// moving no more than 8, 16 and 32 (per-CTA rate drops from ~50 to ~30 GB/s). The hypothesis
// this measures: the block scheduler puts some CTAs on both SMs of one TPC, those pairs share the
// TPC's path to memory, and the slowest CTA sets the time. Each CTA records its SM (%smid) and
// its own start and end (%globaltimer); placement.csv has one row per CTA and launch.
#include "bench_common.h"
#include "atom/sliced_kernels.cuh"
#include "purlin/atom.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace purlin::atom::bench {
namespace {

constexpr std::size_t kBytes = std::size_t{256} << 20;

struct CtaRecord {
  std::uint32_t smid;
  std::uint64_t start_ns;
  std::uint64_t end_ns;
};

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <class A>
__global__ void __launch_bounds__(A::threads, 1)
    recorded_copy(void* dst, const void* src, std::size_t bytes, CtaRecord* records) {
  extern __shared__ __align__(128) unsigned char ws[];
  const std::uint64_t t0 = global_ns();
  const Slice part = slice(bytes, gridDim.x, blockIdx.x);
  A::copy(static_cast<char*>(dst) + part.begin, static_cast<const char*>(src) + part.begin,
          part.end - part.begin, ws);
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    records[blockIdx.x] = {sm, t0, global_ns()};
  }
}

// The same copy with the range dealt out in 1 MiB blocks, round-robin over the CTAs, instead
// of one contiguous slice per CTA: every CTA then streams through the same interleave of
// addresses, whatever the CTA count. If contiguous slices at non-power-of-two offsets collide
// in the memory system, this shape runs every CTA at full rate.
constexpr std::size_t kBlock = std::size_t{1} << 20;

template <class A>
__global__ void __launch_bounds__(A::threads, 1)
    interleaved_copy(void* dst, const void* src, std::size_t bytes, CtaRecord* records) {
  extern __shared__ __align__(128) unsigned char ws[];
  const std::uint64_t t0 = global_ns();
  for (std::size_t at = blockIdx.x * kBlock; at < bytes; at += gridDim.x * kBlock) {
    const std::size_t n = bytes - at < kBlock ? bytes - at : kBlock;
    A::copy(static_cast<char*>(dst) + at, static_cast<const char*>(src) + at, n, ws);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    records[blockIdx.x] = {sm, t0, global_ns()};
  }
}

// Bytes CTA b copies in each shape.
std::size_t cta_bytes(bool interleaved, int ctas, int b) {
  if (!interleaved) {
    const Slice part = slice(kBytes, static_cast<unsigned>(ctas), static_cast<unsigned>(b));
    return part.end - part.begin;
  }
  const std::size_t blocks = kBytes / kBlock;
  return (blocks / ctas + (static_cast<std::size_t>(b) < blocks % ctas ? 1 : 0)) * kBlock;
}

template <class A, bool Interleaved>
int probe(const char* impl, Csv& csv, unsigned char* dst, const unsigned char* src,
          CtaRecord* records, cudaStream_t s) {
  auto* const kernel = Interleaved ? interleaved_copy<A> : recorded_copy<A>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(A::workspace_bytes)) != cudaSuccess) {
    return 1;
  }
  for (int ctas : {8, 12, 16, 24, 32, 48, 64}) {
    for (int launch = 0; launch < 3; ++launch) {  // launch 0 warms up; rows keep all three
      kernel<<<ctas, A::threads, A::workspace_bytes, s>>>(dst, src, kBytes, records);
      std::vector<CtaRecord> host(static_cast<std::size_t>(ctas));
      if (cudaMemcpyAsync(host.data(), records, host.size() * sizeof(CtaRecord),
                          cudaMemcpyDeviceToHost, s) != cudaSuccess ||
          cudaStreamSynchronize(s) != cudaSuccess) {
        return 1;
      }
      std::uint64_t first = host[0].start_ns, last = 0;
      for (const CtaRecord& r : host) {
        first = r.start_ns < first ? r.start_ns : first;
        last = r.end_ns > last ? r.end_ns : last;
      }
      for (int b = 0; b < ctas; ++b) {
        const CtaRecord& r = host[static_cast<std::size_t>(b)];
        const double us = (r.end_ns - r.start_ns) / 1e3;
        csv.row(impl, ctas, launch, b, r.smid, r.smid / 2, (r.start_ns - first) / 1e3, us,
                cta_bytes(Interleaved, ctas, b) / (us * 1e3), (last - first) / 1e3);
      }
    }
  }
  return 0;
}

}  // namespace

int run_placement_bench(const std::string& outdir, const Device& dev) {
  Csv csv(outdir + "/placement.csv",
          "impl,ctas,launch,cta,smid,tpc_guess,start_us,cta_us,cta_GBps,kernel_us");
  if (!csv.good()) return 1;
  unsigned char *dst = nullptr, *src = nullptr;
  CtaRecord* records = nullptr;
  if (cudaMalloc(&dst, kBytes) != cudaSuccess || cudaMalloc(&src, kBytes) != cudaSuccess ||
      cudaMalloc(&records, 1024 * sizeof(CtaRecord)) != cudaSuccess) {
    return 1;
  }
  cudaMemset(src, 1, kBytes);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::printf("placement of copy CTAs on %s (%d SMs)\n", dev.name.c_str(), dev.sms);
  int rc = probe<NativeAtom<DefaultConfig>, false>("native_default", csv, dst, src, records, s);
  rc |= probe<NativeAtom<DefaultConfig>, true>("native_default_interleaved", csv, dst, src, records, s);
  if (dev.bulk) {
    using Bulk = Sm90Bulk<Config<256, 8, 16384>, true>;
    rc |= probe<Bulk, false>("sm90_bulk_store", csv, dst, src, records, s);
    rc |= probe<Bulk, true>("sm90_bulk_store_interleaved", csv, dst, src, records, s);
  }
  cudaStreamDestroy(s);
  cudaFree(records);
  cudaFree(dst);
  cudaFree(src);
  return rc | (cudaGetLastError() == cudaSuccess ? 0 : 1);
}

}  // namespace purlin::atom::bench
