// One plain launch of each configuration whose target is missed, for Nsight Compute (graphs and
// sweeps would bury them among thousands of launches), e.g.
//   ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis
//       --section WarpStateStats -k regex:sliced atom_bench OUTDIR profile
// (one command line).
// Launch order: copy 12 CTAs, copy 8 CTAs (the per-CTA reference), copy 64 CTAs, then the
// 8 x bf16 reduce with 64 CTAs (native default: the register path), with 112 (what 8 ranks' 14
// consumers each of a shared H200 launch), and the best shared-memory pipeline measured, 64 CTAs.
#include "bench_common.h"
#include "atom/sliced_kernels.cuh"
#include "purlin/atom.cuh"

#include <cuda_bf16.h>

#include <cstdio>

namespace purlin::atom::bench {
namespace {

constexpr std::size_t kCopyBytes = std::size_t{256} << 20;
constexpr std::size_t kReduceBytes = std::size_t{128} << 20;
constexpr int kSources = 8;

template <class A>
bool copy_once(int ctas, void* dst, const void* src, cudaStream_t s) {
  if (cudaFuncSetAttribute(sliced_copy<A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(A::workspace_bytes)) != cudaSuccess) {
    return false;
  }
  sliced_copy<A><<<ctas, A::threads, A::workspace_bytes, s>>>(dst, src, kCopyBytes);
  return cudaStreamSynchronize(s) == cudaSuccess;
}

template <class A>
bool reduce_once(int ctas, void* dst, const SourceTable<kSources>& src, cudaStream_t s) {
  auto* const kernel = sliced_reduce<A, __nv_bfloat16, op::Sum, kSources>;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(A::workspace_bytes)) != cudaSuccess) {
    return false;
  }
  kernel<<<ctas, A::threads, A::workspace_bytes, s>>>(dst, src, kSources, kReduceBytes, {});
  return cudaStreamSynchronize(s) == cudaSuccess;
}

}  // namespace

int run_profile_targets(const Device& dev) {
  void* dst = nullptr;
  void* src = nullptr;
  SourceTable<kSources> sources{};
  if (cudaMalloc(&dst, kCopyBytes) != cudaSuccess || cudaMalloc(&src, kCopyBytes) != cudaSuccess) {
    return 1;
  }
  for (int i = 0; i < kSources; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, kReduceBytes) != cudaSuccess) return 1;
    cudaMemset(p, 0x3c, kReduceBytes);  // bf16 0x3c3c: a finite value, no NaN work
    sources.p[i] = p;
  }
  cudaMemset(src, 1, kCopyBytes);
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  std::printf("profile targets on %s\n", dev.name.c_str());
  bool ok = copy_once<NativeAtom<DefaultConfig>>(12, dst, src, s) &&
            copy_once<NativeAtom<DefaultConfig>>(8, dst, src, s) &&
            copy_once<NativeAtom<DefaultConfig>>(64, dst, src, s) &&
            reduce_once<NativeAtom<DefaultConfig>>(64, dst, sources, s) &&
            reduce_once<NativeAtom<DefaultConfig>>(112, dst, sources, s) &&
            reduce_once<Sm80Pipeline<Config<512, 6, 32768, 4, kSources>>>(64, dst, sources, s);
  cudaStreamDestroy(s);
  for (const void* p : sources.p) cudaFree(const_cast<void*>(p));
  cudaFree(dst);
  cudaFree(src);
  return ok && cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace purlin::atom::bench
