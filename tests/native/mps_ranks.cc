// native_mps_ranks RANK NRANKS ID_FILE: one rank of a multi-process job on GPU 0 (several
// processes sharing the GPU under MPS; tests/integration/run_mps.sh starts them), or on the GPU
// that PURLIN_TEST_DEVICE or LOCAL_RANK names (placement.h). Rank 0 creates the ncclUniqueId
// and publishes it at ID_FILE; the others wait for it. Every process runs the same collectives
// through the NCCL API and purlin.h, checks its own buffers byte for byte with the host
// reference (which recomputes every rank's input), prints PASS or FAIL per case and exits 1 if
// any failed (2: usage or setup error, 77: no GPU). Then rounds of grouped ncclSend/ncclRecv
// between all of them (p2p_rounds).
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <purlin/purlin.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cases.h"
#include "id_file.h"
#include "placement.h"
#include "runner.h"
#include "values.h"

namespace {

using namespace purlin::native_test;

Case make(Coll coll, ncclDataType_t type, Op op, std::size_t count, bool in_place = false, int root = 0) {
  Case c;
  c.coll = coll;
  c.type = type;
  c.op = op;
  c.count = count;
  c.in_place = in_place;
  c.root = root;
  return c;
}

std::vector<Case> cases(int n) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  auto count = [n](Coll c, ncclDataType_t t, std::size_t bytes) { return count_for_bytes(c, n, type_bytes(t), bytes); };
  std::vector<Case> v = {
      make(Coll::kAllReduce, ncclBfloat16, Op::kSum, count(Coll::kAllReduce, ncclBfloat16, kMiB)),
      make(Coll::kAllReduce, ncclBfloat16, Op::kSum, count(Coll::kAllReduce, ncclBfloat16, 300 * kMiB)),
      make(Coll::kAllReduce, ncclFloat32, Op::kAvg, 1031, /*in_place=*/true),
      make(Coll::kAllGather, ncclBfloat16, Op::kSum, count(Coll::kAllGather, ncclBfloat16, kMiB)),
      make(Coll::kAllGather, ncclUint8, Op::kSum, 3, /*in_place=*/true),
      make(Coll::kReduceScatter, ncclFloat32, Op::kSum, count(Coll::kReduceScatter, ncclFloat32, kMiB)),
      make(Coll::kReduceScatter, ncclFloat32, Op::kMax, 1031, /*in_place=*/true),
      make(Coll::kAllToAll, ncclFloat32, Op::kSum, count(Coll::kAllToAll, ncclFloat32, kMiB)),
      make(Coll::kAllToAll, ncclBfloat16, Op::kSum, 1031, /*in_place=*/true),
      make(Coll::kBroadcast, ncclUint8, Op::kSum, 1031, false, /*root=*/n - 1),
      make(Coll::kBroadcast, ncclBfloat16, Op::kSum, count(Coll::kBroadcast, ncclBfloat16, 4 * kMiB), true, 0),
      make(Coll::kAllGatherV, ncclBfloat16, Op::kSum, 1031),
      make(Coll::kAllGatherV, ncclFloat32, Op::kSum, 3, /*in_place=*/true),
  };
  v.back().v_displs = false;  // NULL displacements
  return v;
}

// A byte of the transfer from `src` to `dst` at `k`, in round `salt`: every process can compute
// what any other sent.
unsigned char p2p_byte(int src, int dst, std::size_t k, int salt) {
  return static_cast<unsigned char>(src * 131 + dst * 31 + static_cast<int>(k % 251) * 7 + salt * 17);
}

// Bytes from `src` to `dst` in round `salt`: zero, one, odd, 1 MiB + odd, and 64 MiB + 3 around
// the ring in the last round.
std::size_t p2p_bytes(int src, int dst, int n, int salt) {
  if (salt == 4) return dst == (src + 1) % n ? (std::size_t{64} << 20) + 3 : 0;
  const std::size_t sizes[] = {0, 1, 1031, (std::size_t{1} << 20) + 7};
  return sizes[static_cast<std::size_t>(src * 3 + dst * 5 + salt) % 4];
}

// Grouped ncclSend/ncclRecv, AllToAllV-shaped (zeros included; the ring round sends to one peer
// and receives from one), each round one group, issued in a rank-dependent order; every receive
// checked byte for byte. Returns the failed rounds; prints PASS or FAIL per round.
int p2p_rounds(int rank, int n, ncclComm_t comm, cudaStream_t stream) {
  int failed = 0;
  for (int salt = 0; salt < 5; ++salt) {
    std::vector<void*> send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
    std::string error;
    for (int p = 0; p < n; ++p) {
      const std::size_t out = p2p_bytes(rank, p, n, salt);
      const std::size_t in = p2p_bytes(p, rank, n, salt);
      std::vector<unsigned char> h(out);
      for (std::size_t k = 0; k < out; ++k) h[k] = p2p_byte(rank, p, k, salt);
      if (cudaMalloc(&send[static_cast<std::size_t>(p)], out + 1) != cudaSuccess ||
          cudaMalloc(&recv[static_cast<std::size_t>(p)], in + 1) != cudaSuccess ||
          cudaMemcpy(send[static_cast<std::size_t>(p)], h.data(), out, cudaMemcpyHostToDevice) != cudaSuccess)
        error = "setup";
    }
    // A pageable cudaMemcpy may return before its DMA lands, and the stream is non-blocking.
    if (error.empty() && cudaDeviceSynchronize() != cudaSuccess) error = "cudaDeviceSynchronize";
    ncclResult_t r = error.empty() ? ncclGroupStart() : ncclInternalError;
    for (int i = 0; i < n && r == ncclSuccess; ++i) {
      const int p = salt % 2 == 0 ? (rank + i) % n : (rank + n - i) % n;  // every peer once, in another order
      r = ncclRecv(recv[static_cast<std::size_t>(p)], p2p_bytes(p, rank, n, salt), ncclUint8, p, comm, stream);
      if (r == ncclSuccess)
        r = ncclSend(send[static_cast<std::size_t>(p)], p2p_bytes(rank, p, n, salt), ncclUint8, p, comm, stream);
    }
    if (error.empty()) {
      const ncclResult_t end = ncclGroupEnd();
      if (r == ncclSuccess) r = end;
      if (r != ncclSuccess) error = std::string("group: ") + ncclGetErrorString(r);
    }
    if (error.empty() && cudaStreamSynchronize(stream) != cudaSuccess) error = "cudaStreamSynchronize";
    for (int p = 0; p < n && error.empty(); ++p) {
      const std::size_t in = p2p_bytes(p, rank, n, salt);
      std::vector<unsigned char> h(in);
      cudaMemcpy(h.data(), recv[static_cast<std::size_t>(p)], in, cudaMemcpyDeviceToHost);
      for (std::size_t k = 0; k < in; ++k) {
        if (h[k] != p2p_byte(p, rank, k, salt)) {
          error = "byte " + std::to_string(k) + " of " + std::to_string(in) + " from rank " + std::to_string(p);
          break;
        }
      }
    }
    for (void* b : send) cudaFree(b);
    for (void* b : recv) cudaFree(b);
    std::printf("[rank %d] %s send/recv round %d\n%s", rank, error.empty() ? "PASS" : "FAIL", salt,
                error.empty() ? "" : (error + "\n").c_str());
    std::fflush(stdout);
    failed += error.empty() ? 0 : 1;
  }
  return failed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s RANK NRANKS ID_FILE\n", argv[0]);
    return 2;
  }
  setenv("PURLIN_TIMEOUT_S", "60", /*overwrite=*/0);  // a protocol bug fails instead of hanging
  const int rank = std::atoi(argv[1]);
  const int n = std::atoi(argv[2]);
  const std::string id_path = argv[3];
  if (n < 1 || rank < 0 || rank >= n) {
    std::fprintf(stderr, "bad RANK %d / NRANKS %d\n", rank, n);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("[rank %d] SKIPPED: no CUDA device\n", rank);
    return 77;
  }
  const int device = use_process_device(rank);
  if (device < 0) return 2;

  ncclUniqueId id{};
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess || !publish_id(id_path, id)) {
      std::fprintf(stderr, "[rank 0] could not create or publish the unique id at %s\n", id_path.c_str());
      return 2;
    }
  } else if (!read_id(id_path, &id)) {
    std::fprintf(stderr, "[rank %d] no unique id at %s after %d s\n", rank, id_path.c_str(), kIdWaitSeconds);
    return 2;
  }

  ncclComm_t comm = nullptr;
  if (const ncclResult_t r = ncclCommInitRank(&comm, n, id, rank); r != ncclSuccess) {
    std::fprintf(stderr, "[rank %d] ncclCommInitRank: %s: %s\n", rank, ncclGetErrorString(r), ncclGetLastError(nullptr));
    return 2;
  }
  int native = 0;
  if (purlinCommIsNative(comm, &native) != ncclSuccess || native != 1) {
    std::printf("[rank %d] FAIL communicator is not native\n", rank);
    ncclCommDestroy(comm);
    return 1;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  int failed = 0;
  {
    Runner runner(n, {{rank, comm, stream, device}});
    for (const Case& c : cases(n)) {
      std::string report;
      if (!runner.prepare(c, &report)) {
        report = "setup: " + report + "\n";
      } else {
        const ncclResult_t r = runner.issue(0);
        report = runner.finish({r}, ncclSuccess);
      }
      std::printf("[rank %d] %s %s\n%s", rank, report.empty() ? "PASS" : "FAIL", case_name(c).c_str(), report.c_str());
      std::fflush(stdout);
      failed += report.empty() ? 0 : 1;
    }
  }
  failed += p2p_rounds(rank, n, comm, stream);
  cudaStreamDestroy(stream);
  ncclCommDestroy(comm);
  std::printf("[rank %d] %d of %zu cases failed\n", rank, failed, cases(n).size() + 5);
  return failed == 0 ? 0 : 1;
}
