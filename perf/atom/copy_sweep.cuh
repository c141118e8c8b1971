// One Atom's copy timed at several CTA counts: the sweep the local (copy_bench.cu) and the
// between-GPU (peer_bench.cu) copy benchmarks share.
#pragma once

#include <cstddef>
#include <vector>

#include "atom/sliced_kernels.cuh"
#include "bench_common.h"

namespace purlin::atom::bench {

// Times sliced_copy<A> of `bytes` from `src` to `dst` on `stream` (whose GPU is current) at each
// of `ctas_list`, and hands each row to emit(ctas, timing, registers per thread). Nothing when
// the GPU cannot give A its shared-memory workspace.
template <class A, class Emit>
void time_sliced_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes, int max_smem,
                      cudaStream_t stream, const std::vector<int>& ctas_list, Emit&& emit) {
  if (A::workspace_bytes > static_cast<std::size_t>(max_smem)) return;
  if (cudaFuncSetAttribute(sliced_copy<A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(A::workspace_bytes)) != cudaSuccess) {
    return;
  }
  cudaFuncAttributes attr{};
  cudaFuncGetAttributes(&attr, sliced_copy<A>);
  for (int ctas : ctas_list) {
    const Timing t = time_graph(
        [&](cudaStream_t s) { sliced_copy<A><<<ctas, A::threads, A::workspace_bytes, s>>>(dst, src, bytes); },
        stream);
    emit(ctas, t, attr.numRegs);
  }
}

}  // namespace purlin::atom::bench
