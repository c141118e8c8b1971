// Benchmark plumbing shared by the Atom's and SNAC's benchmarks: the DESIGN.md section 7 timing
// method, a CSV writer, and peer access between two GPUs.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace purlin::atom::bench {

struct Device {
  int sms = 0;
  int max_smem = 0;  // opt-in dynamic shared memory per block
  int cc = 0;
  bool bulk = false;  // run the bulk-copy (TMA) candidates: sm_90+, not PURLIN_ATOM_SKIP_BULK=1
  std::string name;
};

Device query_device();

struct Timing {
  double us = 0;      // per invocation
  int per_graph = 0;  // invocations captured in the graph
  int replays = 0;    // timed graph replays
  bool ok = false;
};

// DESIGN.md section 7: capture N invocations in a CUDA graph, replay once to warm up, time 8
// replays with events, divide by 8 N. N is 128 unless one invocation takes long (a few CTAs
// moving 256 MiB take milliseconds), then it shrinks so that one replay stays near 10 ms; beyond
// 10 ms per invocation, 3 replays instead of 8 keep the sweep within the run's time budget.
template <class Launch>
Timing time_graph(Launch&& launch, cudaStream_t s) {
  Timing t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  launch(s);
  cudaEventRecord(a, s);
  launch(s);
  cudaEventRecord(b, s);
  if (cudaStreamSynchronize(s) != cudaSuccess || cudaGetLastError() != cudaSuccess) {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t;
  }
  float one_ms = 0;
  cudaEventElapsedTime(&one_ms, a, b);
  t.per_graph = std::clamp(static_cast<int>(10.0f / std::max(one_ms, 1e-4f)), 1, 128);
  t.replays = one_ms > 10.0f ? 3 : 8;  // single invocations that slow vary little
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < t.per_graph; ++i) launch(s);
  cudaStreamEndCapture(s, &graph);
  if (cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
    cudaGraphLaunch(exec, s);
    cudaEventRecord(a, s);
    for (int r = 0; r < t.replays; ++r) cudaGraphLaunch(exec, s);
    cudaEventRecord(b, s);
    if (cudaStreamSynchronize(s) == cudaSuccess) {
      float ms = 0;
      cudaEventElapsedTime(&ms, a, b);
      t.us = 1000.0 * ms / (t.per_graph * t.replays);
      t.ok = true;
    }
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t;
}

// Access from GPU `from` to GPU `to`'s memory. "" when granted (or the same GPU), else why not.
inline std::string enable_peer_access(int from, int to) {
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

// A CSV file with its header written; its folder is created when missing. good() is false, with
// one line on stderr naming the file, when it cannot be written.
class Csv {
 public:
  Csv(const std::string& path, const std::string& header) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    out_.open(path);
    out_ << header << "\n";
    if (!out_.good()) std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
  }
  bool good() const { return out_.good(); }
  template <class... Ts>
  void row(const Ts&... v) {
    const char* sep = "";
    ((out_ << sep << v, sep = ","), ...);
    out_ << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
};

int run_copy_bench(const std::string& outdir, const Device& dev);
int run_reduce_bench(const std::string& outdir, const Device& dev);
int run_placement_bench(const std::string& outdir, const Device& dev);
int run_profile_targets(const Device& dev);
// Copies from GPU src_dev's memory to dst_dev's, pulled and pushed.
int run_peer_bench(const std::string& outdir, const Device& dev, int src_dev, int dst_dev);

}  // namespace purlin::atom::bench
