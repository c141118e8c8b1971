#include "measure.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <thread>

#include "library.h"

namespace purlin::snac_bench {
namespace {

// A device wait that gave up (abort, or PURLIN_TIMEOUT_S) ends its kernel without a CUDA error
// and reports through the communicator: without this check a call that timed out would count
// as if it had run. Empty when the communicator reports no error.
std::string async_error(ncclComm_t comm, const char* phase) {
  ncclResult_t async = ncclSuccess;
  if (ncclCommGetAsyncError(comm, &async) == ncclSuccess && async == ncclSuccess) return "";
  return std::string(phase) + ": asynchronous error: " + ncclGetErrorString(async) + ": " + ncclGetLastError(comm);
}

// Empty on success, else what failed and CUDA's reason. Every CUDA call of a timing is checked:
// an event that was never recorded leaves its elapsed time at 0, an impossibly fast collective.
std::string cuda_error(cudaError_t e, const char* what) {
  return e == cudaSuccess ? "" : std::string(what) + ": " + cudaGetErrorString(e);
}

}  // namespace

bool Ranks::create(int n, int gpus_wanted, std::string* error) {
  gpus = std::clamp(gpus_wanted, 1, n);
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) devices[static_cast<std::size_t>(r)] = device(r);
  comms.assign(static_cast<std::size_t>(n), nullptr);
  if (const ncclResult_t r = ncclCommInitAll(comms.data(), n, devices.data()); r != ncclSuccess) {
    *error = std::string("ncclCommInitAll: ") + ncclGetErrorString(r) + ": " + ncclGetLastError(nullptr);
    comms.clear();
    return false;
  }
  for (int r = 0; r < n; ++r) {
    cudaStream_t s = nullptr;
    if (const std::string e = cuda_error(cudaSetDevice(device(r)), "cudaSetDevice"); !e.empty()) {
      *error = "rank " + std::to_string(r) + ": " + e;
      return false;
    }
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
      *error = "cudaStreamCreateWithFlags failed";
      return false;
    }
    streams.push_back(s);
    // Only Purlin can tell (library.h); a reference NCCL is measured as it comes.
    const auto is_native = library().comm_is_native;
    if (is_native == nullptr) continue;
    int native = 0;
    if (is_native(comms[static_cast<std::size_t>(r)], &native) != ncclSuccess || native != 1) {
      *error = "rank " + std::to_string(r) + " is not native: nothing of Purlin's to measure";
      return false;
    }
  }
  return true;
}

bool Ranks::synchronize() const {
  bool ok = true;  // every GPU is waited for, also after one failed
  for (int d = 0; d < gpus; ++d) {
    if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) ok = false;
  }
  return ok;
}

Ranks::~Ranks() {
  for (cudaStream_t s : streams) cudaStreamSynchronize(s);
  std::vector<std::thread> threads;  // a destroy may wait for its peers
  for (ncclComm_t c : comms) threads.emplace_back([c] { ncclCommDestroy(c); });
  for (auto& t : threads) t.join();
  for (cudaStream_t s : streams) cudaStreamDestroy(s);
}

Timing time_collective(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                       const std::vector<void*>& out, const Method& m) {
  const int n = ranks.size();
  const auto un = static_cast<std::size_t>(n);
  std::barrier sync(n);
  std::atomic<bool> failed{false};
  std::vector<std::string> errors(un);
  std::vector<float> probe_ms(un, 0), elapsed_ms(un, 0);
  Timing t;

  auto body = [&](int r) {
    const auto ur = static_cast<std::size_t>(r);
    cudaStream_t st = ranks.streams[ur];
    ncclComm_t comm = ranks.comms[ur];
    auto fail = [&](const std::string& what) {
      if (errors[ur].empty()) errors[ur] = what;
      failed = true;
    };
    // A failure is recorded and the rank goes on through every barrier: one that left early
    // would hang its peers.
    auto cuda = [&](cudaError_t e, const char* what) {
      if (std::string why = cuda_error(e, what); !why.empty()) fail(why);
    };
    // Checked after every phase, to name the one that failed.
    auto check = [&](const char* phase) {
      if (std::string e = async_error(comm, phase); !e.empty()) fail(e);
    };
    auto call = [&] {
      if (const ncclResult_t q = issue(c, s, in[ur], out[ur], comm, st); q != ncclSuccess) {
        fail(std::string(name(c)) + ": " + ncclGetErrorString(q));
      }
    };
    cuda(cudaSetDevice(ranks.device(r)), "cudaSetDevice");  // the GPU of the rank's stream and events
    cudaEvent_t a = nullptr, b = nullptr;
    cuda(cudaEventCreate(&a), "cudaEventCreate");
    cuda(cudaEventCreate(&b), "cudaEventCreate");

    // Warm-up, then the probe from a common start: a rank whose thread starts late would
    // otherwise stretch its peers' probe, and a slow probe shrinks the graph to a launch-bound
    // 1 call x 3 replays.
    const auto enqueue_start = std::chrono::steady_clock::now();
    call();
    // A first call that blocks the host (a CUDA call waiting for the device while peers' kernels
    // wait for this one) shows here, not in the device timings.
    const double enqueue_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueue_start).count();
    if (enqueue_s > 1.0) std::fprintf(stderr, "rank %d: the warm-up call took %.1f s to enqueue\n", r, enqueue_s);
    if (cudaStreamSynchronize(st) != cudaSuccess) fail("warm-up: stream error");
    check("warm-up");
    // Three probes; the fastest round's slowest rank counts. An eager call's time includes how
    // late the last rank's thread left the barrier, and one late wake-up must not shrink the
    // graph (a 1 KiB call measured 169 us eagerly gave a 3-call graph dominated by its launch).
    double probe = 0;
    for (int round = 0; round < 3; ++round) {
      sync.arrive_and_wait();
      cuda(cudaEventRecord(a, st), "probe: cudaEventRecord");
      call();
      cuda(cudaEventRecord(b, st), "probe: cudaEventRecord");
      if (cudaStreamSynchronize(st) != cudaSuccess) fail("probe: stream error");
      check("probe");
      cuda(cudaEventElapsedTime(&probe_ms[ur], a, b), "probe: cudaEventElapsedTime");
      sync.arrive_and_wait();
      const double slowest = *std::max_element(probe_ms.begin(), probe_ms.end());
      probe = round == 0 ? slowest : std::min(probe, slowest);
    }
    if (r == 0) {
      t.calls = std::clamp(static_cast<int>(m.replay_ms / std::max(probe, 1e-4)), 1, m.max_calls);
      t.replays = probe > m.replay_ms ? 3 : m.replays;
    }
    sync.arrive_and_wait();

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (!failed) {
      if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) fail("begin capture");
      for (int i = 0; i < t.calls && !failed; ++i) call();
      if (cudaStreamEndCapture(st, &graph) != cudaSuccess) fail("end capture");
      if (graph != nullptr && cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) fail("instantiate");
    }
    // Every rank must agree to replay, or the replaying ones would wait for the others forever.
    sync.arrive_and_wait();
    if (!failed) {
      cuda(cudaGraphLaunch(exec, st), "warm-up replay: cudaGraphLaunch");
      if (cudaStreamSynchronize(st) != cudaSuccess) fail("warm-up replay");
      check("warm-up replay");
    }
    sync.arrive_and_wait();
    if (!failed) {
      cuda(cudaEventRecord(a, st), "timed replays: cudaEventRecord");
      for (int i = 0; i < t.replays; ++i) cuda(cudaGraphLaunch(exec, st), "timed replays: cudaGraphLaunch");
      cuda(cudaEventRecord(b, st), "timed replays: cudaEventRecord");
      if (cudaStreamSynchronize(st) != cudaSuccess) fail("timed replays");
      check("timed replays");
      cuda(cudaEventElapsedTime(&elapsed_ms[ur], a, b), "timed replays: cudaEventElapsedTime");
    }
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  };

  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (auto& th : threads) th.join();

  for (std::size_t r = 0; r < un; ++r) {
    if (!errors[r].empty()) {
      t.error = "rank " + std::to_string(r) + ": " + errors[r];
      return t;
    }
  }
  const double slowest = *std::max_element(elapsed_ms.begin(), elapsed_ms.end());
  if (!(slowest > 0)) {
    t.error = "timed replays: no elapsed time";
    return t;
  }
  t.us = 1000.0 * slowest / (static_cast<double>(t.calls) * t.replays);
  t.ok = true;
  return t;
}

std::string run_once(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                     const std::vector<void*>& out) {
  const auto un = static_cast<std::size_t>(ranks.size());
  std::vector<std::string> errors(un);
  // A thread per rank, as in time_collective: a rank's call may wait for its peers' (NCCL's
  // connection setup on first use), so one thread issuing them in turn could hang.
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < un; ++r) {
    threads.emplace_back([&, r] {
      errors[r] = cuda_error(cudaSetDevice(ranks.device(static_cast<int>(r))), "cudaSetDevice");
      if (!errors[r].empty()) return;
      if (const ncclResult_t q = issue(c, s, in[r], out[r], ranks.comms[r], ranks.streams[r]); q != ncclSuccess) {
        errors[r] = std::string(name(c)) + ": " + ncclGetErrorString(q);
      } else if (cudaStreamSynchronize(ranks.streams[r]) != cudaSuccess) {
        errors[r] = "stream error";
      } else {
        errors[r] = async_error(ranks.comms[r], "eager call");
      }
    });
  }
  for (auto& th : threads) th.join();
  for (std::size_t r = 0; r < un; ++r) {
    if (!errors[r].empty()) return "rank " + std::to_string(r) + ": " + errors[r];
  }
  return "";
}

double memcpy_rw_GBps(int device, std::size_t bytes, int copies) {
  void* src = nullptr;
  void* dst = nullptr;
  cudaStream_t s = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  double rate = 0;
  if (cudaSetDevice(device) == cudaSuccess && cudaMalloc(&src, bytes) == cudaSuccess &&
      cudaMalloc(&dst, bytes) == cudaSuccess && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMemsetAsync(src, 0, bytes, s);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s);  // warm-up
    cudaEventRecord(a, s);
    for (int i = 0; i < copies; ++i) cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s);
    cudaEventRecord(b, s);
    float ms = 0;
    if (cudaStreamSynchronize(s) == cudaSuccess && cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms > 0) {
      rate = 2.0 * static_cast<double>(bytes) * copies / (ms * 1e-3) / 1e9;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  if (s != nullptr) cudaStreamDestroy(s);
  cudaFree(src);
  cudaFree(dst);
  return rate;
}

}  // namespace purlin::snac_bench
