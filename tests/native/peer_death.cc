// native_peer_death RANK NRANKS DIR: one rank of a job on GPU 0 (processes sharing the GPU under
// MPS; tests/integration/run_peer_death.sh starts them), or on the GPU that PURLIN_TEST_DEVICE or
// LOCAL_RANK names (placement.h), in which the last rank kills itself (SIGKILL) in the
// middle of an AllReduce. What PyTorch's watchdog relies on, checked by every survivor:
//   1. its wait ends: ncclCommGetAsyncError turns ncclRemoteError within kDetectBound of the
//      collective that cannot finish, and ncclGetLastError names the dead rank
//   2. ncclCommAbort returns within a second, and the stream is idle after it
//   3. the GPU is usable: a new communicator of the survivors (a new unique id) runs an
//      AllReduce whose result is exact
// Rank 0 publishes the unique ids at DIR/id1 and DIR/id2. Prints PASS or FAIL per check; exits
// 0 when all passed, 1 when any failed, 2 on usage or setup errors, 77 without a GPU.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <purlin/purlin.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "id_file.h"
#include "placement.h"

namespace {

using purlin::native_test::kIdWaitSeconds;
using purlin::native_test::use_process_device;
using purlin::native_test::publish_id;
using purlin::native_test::read_id;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kIters = 40;
constexpr int kKillAt = 10;                  // the victim dies inside this iteration's AllReduce
constexpr std::size_t kCount = 16u << 20;    // floats: 64 MiB, long enough to be caught mid-flight
constexpr milliseconds kDetectBound{5000};   // far below PURLIN_TIMEOUT_S (set to 60 below)
constexpr milliseconds kAbortBound{1000};    // NCCL's contract for ncclCommAbort

int g_rank = 0;
int g_failed = 0;

void check(bool ok, const std::string& what) {
  std::printf("[rank %d] %s %s\n", g_rank, ok ? "PASS" : "FAIL", what.c_str());
  std::fflush(stdout);
  g_failed += ok ? 0 : 1;
}

bool join(const std::string& path, int rank, int n, ncclComm_t* comm) {
  ncclUniqueId id{};
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess || !publish_id(path, id)) {
      std::fprintf(stderr, "[rank 0] could not create or publish the unique id at %s\n", path.c_str());
      return false;
    }
  } else if (!read_id(path, &id)) {
    std::fprintf(stderr, "[rank %d] no unique id at %s after %d s\n", rank, path.c_str(), kIdWaitSeconds);
    return false;
  }
  if (const ncclResult_t r = ncclCommInitRank(comm, n, id, rank); r != ncclSuccess) {
    std::fprintf(stderr, "[rank %d] ncclCommInitRank(%d ranks): %s: %s\n", rank, n, ncclGetErrorString(r),
                 ncclGetLastError(nullptr));
    return false;
  }
  return true;
}

// The survivor's side of the loop: every AllReduce is watched the way PyTorch's watchdog
// watches a work item, polling the stream and the communicator's asynchronous error.
struct Stall {
  ncclResult_t error = ncclSuccess;
  milliseconds waited{0};
  int iteration = -1;
};

Stall run_until_error(ncclComm_t comm, cudaStream_t stream, float* buf) {
  Stall s;
  for (int i = 0; i < kIters; ++i) {
    const auto start = Clock::now();
    if (ncclResult_t r = ncclAllReduce(buf, buf, kCount, ncclFloat32, ncclSum, comm, stream); r != ncclSuccess) {
      s.error = r;
      s.iteration = i;
      return s;
    }
    for (;;) {
      const cudaError_t q = cudaStreamQuery(stream);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) {
        std::printf("[rank %d] FAIL stream error %s in iteration %d\n", g_rank, cudaGetErrorString(q), i);
        s.error = ncclUnhandledCudaError;
        s.iteration = i;
        return s;
      }
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      s.waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
      if (async != ncclSuccess) {
        s.error = async;
        s.iteration = i;
        return s;
      }
      if (s.waited > std::chrono::seconds(120)) return s;  // nothing ends the wait: the check fails
      std::this_thread::sleep_for(milliseconds(1));
    }
  }
  return s;
}

// The survivors' new communicator: rank r contributes (r + 1) * (i % 7 + 1), small integers
// whose float sums are exact in any order.
bool exact_allreduce(ncclComm_t comm, cudaStream_t stream, int rank, int n) {
  constexpr std::size_t kElems = (1u << 20) + 3;
  std::vector<float> host(kElems);
  for (std::size_t i = 0; i < kElems; ++i) host[i] = static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1));
  float* dev = nullptr;
  if (cudaMalloc(&dev, kElems * sizeof(float)) != cudaSuccess) return false;
  bool ok = cudaMemcpy(dev, host.data(), kElems * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
            ncclAllReduce(dev, dev, kElems, ncclFloat32, ncclSum, comm, stream) == ncclSuccess &&
            cudaStreamSynchronize(stream) == cudaSuccess &&
            cudaMemcpy(host.data(), dev, kElems * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
  const int ranks_sum = n * (n + 1) / 2;
  for (std::size_t i = 0; ok && i < kElems; ++i) {
    const float want = static_cast<float>(ranks_sum * static_cast<int>(i % 7 + 1));
    if (host[i] != want) {
      std::printf("[rank %d] element %zu is %g, %g expected\n", rank, i, static_cast<double>(host[i]),
                  static_cast<double>(want));
      ok = false;
    }
  }
  cudaFree(dev);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s RANK NRANKS DIR\n", argv[0]);
    return 2;
  }
  // The watcher must end the survivors' waits, not the device timeout.
  setenv("PURLIN_TIMEOUT_S", "60", /*overwrite=*/0);
  const int rank = std::atoi(argv[1]);
  const int n = std::atoi(argv[2]);
  const std::string dir = argv[3];
  g_rank = rank;
  if (n < 2 || rank < 0 || rank >= n) {
    std::fprintf(stderr, "bad RANK %d / NRANKS %d (at least 2)\n", rank, n);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("[rank %d] SKIPPED: no CUDA device\n", rank);
    return 77;
  }
  if (use_process_device(rank) < 0) return 2;
  const int victim = n - 1;

  ncclComm_t comm = nullptr;
  if (!join(dir + "/id1", rank, n, &comm)) return 2;
  int native = 0;
  if (purlinCommIsNative(comm, &native) != ncclSuccess || native != 1) {
    std::printf("[rank %d] FAIL communicator is not native\n", rank);
    return 1;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  float* buf = nullptr;
  if (cudaMalloc(&buf, kCount * sizeof(float)) != cudaSuccess || cudaMemset(buf, 0, kCount * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "[rank %d] cudaMalloc failed\n", rank);
    return 2;
  }

  if (rank == victim) {
    for (int i = 0; i < kIters; ++i) {
      ncclAllReduce(buf, buf, kCount, ncclFloat32, ncclSum, comm, stream);
      if (i == kKillAt) {
        // Let the kernel start, so that the peers are inside the collective with it.
        std::this_thread::sleep_for(milliseconds(2));
        std::printf("[rank %d] killing itself inside AllReduce #%d\n", rank, i);
        std::fflush(stdout);
        kill(getpid(), SIGKILL);
      }
      cudaStreamSynchronize(stream);
    }
    return 3;  // not reached
  }

  const Stall s = run_until_error(comm, stream, buf);
  check(s.error == ncclRemoteError,
        "ncclCommGetAsyncError is ncclRemoteError (it was " + std::string(ncclGetErrorString(s.error)) +
            ", iteration " + std::to_string(s.iteration) + ")");
  check(s.waited < kDetectBound, "the wait ended " + std::to_string(s.waited.count()) + " ms into the collective");
  const std::string text = ncclGetLastError(comm);
  check(text.find("rank " + std::to_string(victim) + " ") != std::string::npos,
        "ncclGetLastError names rank " + std::to_string(victim) + ": \"" + text + "\"");

  const auto abort_start = Clock::now();
  const ncclResult_t aborted = ncclCommAbort(comm);
  const auto abort_took = std::chrono::duration_cast<milliseconds>(Clock::now() - abort_start);
  check(aborted == ncclSuccess, "ncclCommAbort returned " + std::string(ncclGetErrorString(aborted)));
  check(abort_took < kAbortBound, "ncclCommAbort took " + std::to_string(abort_took.count()) + " ms");
  const cudaError_t idle = cudaStreamSynchronize(stream);
  check(idle == cudaSuccess, std::string("the stream is idle and healthy after the abort: ") + cudaGetErrorString(idle));

  const int survivors = n - 1;
  ncclComm_t fresh = nullptr;
  if (!join(dir + "/id2", rank, survivors, &fresh)) {
    check(false, "a new communicator of the survivors forms");
  } else {
    if (survivors > 1) {
      int fresh_native = 0;
      check(purlinCommIsNative(fresh, &fresh_native) == ncclSuccess && fresh_native == 1,
            "the survivors' communicator is native");
    }
    check(exact_allreduce(fresh, stream, rank, survivors),
          "AllReduce of " + std::to_string(survivors) + " survivors on a new communicator is exact");
    check(ncclCommDestroy(fresh) == ncclSuccess, "ncclCommDestroy of the new communicator");
  }
  cudaFree(buf);
  cudaStreamDestroy(stream);
  std::printf("[rank %d] %d checks failed\n", rank, g_failed);
  return g_failed == 0 ? 0 : 1;
}
