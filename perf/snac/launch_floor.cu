// launch_floor OUTDIR: the time per call that n ranks sharing one GPU pay before any data
// moves, measured the way snac_bench measures a collective (DESIGN section 7: each rank's own
// stream captures 128 launches into a CUDA graph, one warm-up replay, 8 timed replays, the
// slowest rank counts). Two kernels, each launched with a SNAC kernel's shape (CTAs, 256
// threads, dynamic shared memory):
//   empty    does nothing: the graph launch cost of n concurrent streams;
//   barrier  every CTA of every rank arrives on one counter and waits until all have, with a
//            device-resident epoch per CTA (no host synchronization, as in SNAC): the floor of
//            any collective in which every rank's kernel must run at the same time.
// A latency-regime collective on a shared GPU cannot be faster than `barrier` with its CTA
// count; comparing the two with snac_bench's small-message figures tells how much of a call
// is the protocol and how much is n kernels launched on one GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <barrier>
#include <iterator>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "atom/bench_common.h"  // Csv

namespace {

constexpr int kThreads = 256;
constexpr int kCalls = 128;
constexpr int kReplays = 8;
constexpr int kMaxCtas = 64;

__global__ void empty_kernel() {}

// `epochs` holds one word per CTA of this rank; `counter` is shared by every rank.
__global__ void barrier_kernel(unsigned long long* counter, unsigned long long* epochs,
                               unsigned long long everyone) {
  if (threadIdx.x != 0) return;
  const unsigned long long e = epochs[blockIdx.x] + 1;
  atomicAdd(counter, 1ull);
  const unsigned long long want = e * everyone;
  while (*static_cast<volatile unsigned long long*>(counter) < want) {
  }
  epochs[blockIdx.x] = e;
}

struct Shape {
  bool barrier;
  int ranks;
  int ctas;
  std::size_t smem;
};

// Microseconds per call of the slowest rank, or a negative value on a CUDA error.
double time_shape(const Shape& s) {
  unsigned long long* counter = nullptr;
  unsigned long long* epochs = nullptr;
  if (cudaMalloc(&counter, sizeof(*counter)) != cudaSuccess ||
      cudaMalloc(&epochs, sizeof(*epochs) * kMaxCtas * static_cast<std::size_t>(s.ranks)) !=
          cudaSuccess) {
    return -1;
  }
  cudaMemset(counter, 0, sizeof(*counter));
  cudaMemset(epochs, 0, sizeof(*epochs) * kMaxCtas * static_cast<std::size_t>(s.ranks));
  cudaDeviceSynchronize();
  const auto everyone = static_cast<unsigned long long>(s.ranks) * static_cast<unsigned>(s.ctas);

  std::vector<float> ms(static_cast<std::size_t>(s.ranks), 0);
  std::vector<int> failed(static_cast<std::size_t>(s.ranks), 0);
  std::barrier sync(s.ranks);
  auto body = [&](int r) {
    cudaSetDevice(0);
    cudaStream_t st = nullptr;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    unsigned long long* mine = epochs + static_cast<std::size_t>(r) * kMaxCtas;
    auto launch = [&] {
      if (s.barrier) {
        barrier_kernel<<<s.ctas, kThreads, s.smem, st>>>(counter, mine, everyone);
      } else {
        empty_kernel<<<s.ctas, kThreads, s.smem, st>>>();
      }
    };
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < kCalls; ++i) launch();
    if (cudaStreamEndCapture(st, &graph) != cudaSuccess ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      failed[static_cast<std::size_t>(r)] = 1;
    }
    // Every rank replays, or a barrier kernel would wait forever for the missing ones.
    sync.arrive_and_wait();
    const bool go = std::none_of(failed.begin(), failed.end(), [](int f) { return f != 0; });
    cudaEvent_t a = nullptr, b = nullptr;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    if (go) {
      cudaGraphLaunch(exec, st);  // warm-up
      cudaStreamSynchronize(st);
    }
    sync.arrive_and_wait();
    if (go) {
      cudaEventRecord(a, st);
      for (int i = 0; i < kReplays; ++i) cudaGraphLaunch(exec, st);
      cudaEventRecord(b, st);
      if (cudaStreamSynchronize(st) != cudaSuccess) failed[static_cast<std::size_t>(r)] = 1;
      cudaEventElapsedTime(&ms[static_cast<std::size_t>(r)], a, b);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaStreamDestroy(st);
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < s.ranks; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
  cudaFree(counter);
  cudaFree(epochs);
  if (std::any_of(failed.begin(), failed.end(), [](int f) { return f != 0; })) return -1;
  return 1000.0 * *std::max_element(ms.begin(), ms.end()) / (kCalls * kReplays);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  // Its ranks share the GPU as threads: one hardware queue per stream, as snac_bench.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  cudaSetDevice(0);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  // The SNAC kernels' dynamic shared memory: copies 8 x 16 KiB, reductions 3 x 64 KiB stages
  // (src/launch/launcher.cuh); 0 for comparison.
  const std::size_t smem_sizes[] = {0, 128 * 1024, 192 * 1024};
  const int most =
      static_cast<int>(*std::max_element(std::begin(smem_sizes), std::end(smem_sizes)));
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most);
  cudaFuncSetAttribute(barrier_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most);
  purlin::atom::bench::Csv csv(std::string(argv[1]) + "/launch_floor.csv",
                               "kernel,ranks,ctas,threads,smem_bytes,us_per_call");
  if (!csv.good()) {
    std::fprintf(stderr, "cannot write %s/launch_floor.csv\n", argv[1]);
    return 1;
  }
  int rc = 0;
  for (const bool barrier : {false, true}) {
    for (const int ranks : {1, 2, 4, 8}) {
      for (const int ctas : {1, 4, 6, 16}) {
        // Every CTA of a barrier must be resident at once: one per SM at these smem sizes.
        if (barrier && ranks * ctas > sms) continue;
        for (const std::size_t smem : smem_sizes) {
          const double us = time_shape({barrier, ranks, ctas, smem});
          const char* name = barrier ? "barrier" : "empty";
          if (us < 0) {
            std::printf("%s ranks %d ctas %d smem %zu: failed: %s\n", name, ranks, ctas, smem,
                        cudaGetErrorString(cudaGetLastError()));
            rc = 1;
            continue;
          }
          csv.row(name, ranks, ctas, kThreads, smem, us);
          std::printf("%-8s ranks %d  ctas %2d  smem %6zu  %8.2f us per call\n", name, ranks,
                      ctas, smem, us);
          std::fflush(stdout);
        }
      }
    }
  }
  return rc;
}
