// mps_bench OUTDIR --rank R --ranks N --id-file FILE [--min BYTES] [--max BYTES]
//           [--collectives AllReduce,AllGather] [--calls N] [--replays N] [--label NAME]
//           [--csv FILE]
//
// One rank per process (several processes sharing GPU 0 under MPS: compare_mps.sh starts them;
// or one process per GPU), through the NCCL API only, so that Purlin and a reference NCCL
// preloaded in its place (library.h) run the same code. Rank 0 creates the communicator's id and
// publishes it at FILE.
// The DESIGN.md section 7 method, as snac_bench applies it to ranks as threads: bf16, ncclSum,
// message sizes as collectives.h defines them; per size one eager call checked exactly on every
// rank, then three eager probes, `calls` calls captured in a CUDA graph, one warm-up replay and
// `replays` timed replays between two events; the time per call is the slowest rank's, taken
// with an ncclAllReduce(max) over the communicator, and the ranks start each timed part
// together behind an ncclAllReduce barrier. Rank 0 writes snac_bench's CSV columns.
//
// AllReduce and AllGather only: their exact answer is easy to state for any rank count (inputs
// are small integers, whose bf16 sums are exact). Exit status 1 when a size failed or had a
// wrong element, 2 on bad usage.
//
// The process's GPU: $PURLIN_BENCH_DEVICE when set, else $LOCAL_RANK (as launchers such as
// torchrun set it), else 0 (tests/native/placement.h: process_device).
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "atom/bench_common.h"
#include "collectives.h"
#include "id_file.h"
#include "library.h"
#include "placement.h"

namespace {

using namespace purlin::snac_bench;

struct Options {
  std::string outdir;
  int rank = -1;
  int ranks = 0;
  std::string id_file;
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = std::size_t{256} << 20;
  std::vector<Coll> colls;
  int max_calls = 128;
  int replays = 8;
  double replay_ms = 20.0;
  std::string label = "purlin";
  std::string csv = "mps.csv";
};

bool parse_options(int argc, char** argv, Options* o) {
  if (argc < 2 || argv[1][0] == '-') return false;
  o->outdir = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--min" || flag == "--max") {
      if (!parse_bytes(value, flag == "--min" ? &o->min_bytes : &o->max_bytes)) return false;
    } else if (flag == "--rank") o->rank = std::atoi(value.c_str());
    else if (flag == "--ranks") o->ranks = std::atoi(value.c_str());
    else if (flag == "--id-file") o->id_file = value;
    else if (flag == "--calls") o->max_calls = std::atoi(value.c_str());
    else if (flag == "--replays") o->replays = std::atoi(value.c_str());
    else if (flag == "--label") o->label = value;
    else if (flag == "--csv") o->csv = value;
    else if (flag == "--collectives") {
      std::stringstream ss(value);
      for (std::string item; std::getline(ss, item, ',');) {
        Coll c{};
        if (!parse(item, &c) || (c != Coll::kAllReduce && c != Coll::kAllGather)) {
          std::fprintf(stderr, "collective '%s': only AllReduce and AllGather\n", item.c_str());
          return false;
        }
        o->colls.push_back(c);
      }
    } else {
      return false;
    }
  }
  if ((argc - 2) % 2 != 0) return false;
  if (o->colls.empty()) o->colls = {Coll::kAllReduce, Coll::kAllGather};
  return o->ranks >= 1 && o->rank >= 0 && o->rank < o->ranks && !o->id_file.empty() &&
         o->min_bytes >= 1 && o->min_bytes <= o->max_bytes && o->max_calls >= 1 && o->replays >= 1;
}

// Element i of rank r's input: a small integer, so that any sum over ranks is exact in bf16.
float input_value(int r, std::size_t i) { return static_cast<float>(1 + r + static_cast<int>(i % 5)); }

std::vector<__nv_bfloat16> input_of(int r, std::size_t elems) {
  std::vector<__nv_bfloat16> v(elems);
  for (std::size_t i = 0; i < elems; ++i) v[i] = __float2bfloat16(input_value(r, i));
  return v;
}

// Element i of this rank's output, as NCCL defines the call.
float expected(Coll c, int n, const Shape& s, std::size_t i) {
  if (c == Coll::kAllReduce) {
    float sum = 0;
    for (int r = 0; r < n; ++r) sum += input_value(r, i);
    return sum;
  }
  return input_value(static_cast<int>(i / s.count), i % s.count);  // AllGather
}

struct Rank {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* scalar = nullptr;  // device word of the barrier and the max
};

// Every rank reaches this point before any returns: one ncclAllReduce waited for.
bool barrier(const Rank& k) {
  return ncclAllReduce(k.scalar, k.scalar, 1, ncclFloat32, ncclSum, k.comm, k.stream) == ncclSuccess &&
         cudaStreamSynchronize(k.stream) == cudaSuccess;
}

// The largest of every rank's `v`.
bool max_over_ranks(const Rank& k, double v, double* out) {
  const float f = static_cast<float>(v);
  float m = 0;
  if (cudaMemcpy(k.scalar, &f, sizeof f, cudaMemcpyHostToDevice) != cudaSuccess ||
      ncclAllReduce(k.scalar, k.scalar, 1, ncclFloat32, ncclMax, k.comm, k.stream) != ncclSuccess ||
      cudaStreamSynchronize(k.stream) != cudaSuccess ||
      cudaMemcpy(&m, k.scalar, sizeof m, cudaMemcpyDeviceToHost) != cudaSuccess) {
    return false;
  }
  *out = m;
  return true;
}

// The slowest rank's milliseconds, false when any rank's `ms` is negative (its part failed) or
// the exchange failed. Every rank joins the exchange whatever its own result, so that all of them
// give up together: one that left early would leave its peers waiting in the next collective.
bool slowest_over_ranks(const Rank& k, double ms, double* slowest) {
  constexpr double kFailed = 1e30;  // above any time, below float's largest
  return max_over_ranks(k, ms < 0 ? kFailed : ms, slowest) && *slowest < kFailed;
}

// Milliseconds of `calls` eager calls, or of `replays` replays of `graph`, on this rank's stream;
// -1 when a call failed (an unchecked event would time nothing and give 0).
double timed(const Rank& k, cudaEvent_t a, cudaEvent_t b, cudaGraphExec_t graph, int count, Coll c,
             const Shape& s, const void* in, void* out) {
  bool ok = cudaEventRecord(a, k.stream) == cudaSuccess;
  for (int i = 0; i < count; ++i) {  // every call made, also after one failed: the peers wait for each
    if (graph != nullptr) ok = cudaGraphLaunch(graph, k.stream) == cudaSuccess && ok;
    else ok = issue(c, s, in, out, k.comm, k.stream) == ncclSuccess && ok;
  }
  ok = cudaEventRecord(b, k.stream) == cudaSuccess && ok;
  float ms = 0;
  if (!ok || cudaEventSynchronize(b) != cudaSuccess || cudaEventElapsedTime(&ms, a, b) != cudaSuccess) return -1;
  return ms;
}

struct Result {
  bool ok = false;
  std::string error;
  std::size_t wrong = 0;
  double us = 0;
  int calls = 0;
};

Result measure(const Options& o, const Rank& k, Coll c, const Shape& s) {
  Result res;
  void* in = nullptr;
  void* out = nullptr;
  if (cudaMalloc(&in, std::max<std::size_t>(s.in_bytes, 2)) != cudaSuccess ||
      cudaMalloc(&out, std::max<std::size_t>(s.out_bytes, 2)) != cudaSuccess) {
    cudaFree(in);
    res.error = "cudaMalloc";
    return res;
  }
  const std::vector<__nv_bfloat16> host_in = input_of(o.rank, s.in_bytes / kElemBytes);
  cudaMemcpy(in, host_in.data(), s.in_bytes, cudaMemcpyHostToDevice);
  cudaMemset(out, 0, s.out_bytes);
  // Both run on the legacy stream, which the rank's non-blocking stream does not wait for (and a
  // pageable cudaMemcpy may return before its DMA lands): without this the memset can land
  // after the checked call and be counted as wrong elements.
  if (cudaDeviceSynchronize() != cudaSuccess) {
    cudaFree(in);
    cudaFree(out);
    res.error = "buffer setup";
    return res;
  }
  cudaEvent_t a = nullptr;
  cudaEvent_t b = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  [&] {
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) {
      res.error = "cudaEventCreate";
      return;
    }
    if (issue(c, s, in, out, k.comm, k.stream) != ncclSuccess || cudaStreamSynchronize(k.stream) != cudaSuccess) {
      res.error = "eager call";
      return;
    }
    std::vector<__nv_bfloat16> got(s.out_bytes / kElemBytes);
    cudaMemcpy(got.data(), out, s.out_bytes, cudaMemcpyDeviceToHost);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (__bfloat162float(got[i]) != expected(c, o.ranks, s, i)) ++res.wrong;
    }
    double probe = 1e30;
    for (int i = 0; i < 3; ++i) {
      double slowest = 0;
      if (!barrier(k)) {
        res.error = "probe";
        return;
      }
      const double ms = timed(k, a, b, nullptr, 1, c, s, in, out);
      if (!slowest_over_ranks(k, ms, &slowest)) {
        res.error = "probe";
        return;
      }
      probe = std::min(probe, slowest);
    }
    // Every rank derives the same count from the same (reduced) probe.
    res.calls = std::clamp(static_cast<int>(o.replay_ms / std::max(probe, 1e-6)), 1, o.max_calls);
    if (cudaStreamBeginCapture(k.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      res.error = "capture";
      return;
    }
    for (int i = 0; i < res.calls; ++i) issue(c, s, in, out, k.comm, k.stream);
    if (cudaStreamEndCapture(k.stream, &graph) != cudaSuccess ||
        cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      res.error = "graph";
      return;
    }
    double warm = 0;  // also the barrier before the timed replays
    if (!slowest_over_ranks(k, timed(k, a, b, exec, 1, c, s, in, out), &warm)) {
      res.error = "warm-up replay";
      return;
    }
    const double ms = timed(k, a, b, exec, o.replays, c, s, in, out);
    double slowest = 0;
    if (!slowest_over_ranks(k, ms, &slowest)) {
      res.error = "timed replays";
      return;
    }
    res.us = slowest * 1e3 / (static_cast<double>(res.calls) * o.replays);
    res.ok = true;
  }();
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (a != nullptr) cudaEventDestroy(a);
  if (b != nullptr) cudaEventDestroy(b);
  cudaFree(in);
  cudaFree(out);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s OUTDIR --rank R --ranks N --id-file FILE [--min BYTES] [--max BYTES] "
                 "[--collectives AllReduce,AllGather] [--calls N] [--replays N] [--label NAME] [--csv FILE]\n"
                 "GPU: $PURLIN_BENCH_DEVICE if set, else $LOCAL_RANK, else 0\n",
                 argv[0]);
    return 2;
  }
  setenv("PURLIN_TIMEOUT_S", "60", /*overwrite=*/0);  // a hang becomes an error
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string placement;
  const int device = purlin::native_test::process_device("PURLIN_BENCH_DEVICE", &placement);
  if (device < 0) {
    std::fprintf(stderr, "[rank %d] %s\n", o.rank, placement.c_str());
    return 1;
  }
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    std::fprintf(stderr, "[rank %d] GPU %d: %s\n", o.rank, device, cudaGetErrorString(e));
    return 1;
  }
  const Library& lib = library();
  if (o.rank == 0) {
    std::printf("library %s: NCCL version %s (%d), %s; %d processes\n", o.label.c_str(),
                version_string(lib.version).c_str(), lib.version, lib.path.c_str(), o.ranks);
  }
  ncclUniqueId id{};
  if (o.rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess || !purlin::native_test::publish_id(o.id_file, id)) {
      std::fprintf(stderr, "[rank 0] cannot publish the unique id at %s\n", o.id_file.c_str());
      return 1;
    }
  } else if (!purlin::native_test::read_id(o.id_file, &id)) {
    std::fprintf(stderr, "[rank %d] no unique id at %s\n", o.rank, o.id_file.c_str());
    return 1;
  }
  Rank k;
  if (ncclCommInitRank(&k.comm, o.ranks, id, o.rank) != ncclSuccess ||
      cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&k.scalar, sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "[rank %d] communicator setup failed\n", o.rank);
    return 1;
  }
  std::unique_ptr<purlin::atom::bench::Csv> csv;
  if (o.rank == 0) {
    csv = std::make_unique<purlin::atom::bench::Csv>(
        o.outdir + "/" + o.csv,
        "library,collective,bytes,ranks,us_per_call,algbw_GBps,busbw_GBps,hbm_eff,graph_calls,replays,"
        "memcpy_rw_GBps,wrong,gpus");
    if (!csv->good()) {
      std::fprintf(stderr, "cannot write %s/%s\n", o.outdir.c_str(), o.csv.c_str());
      return 1;
    }
  }
  // The GPUs the processes were dealt over, for the CSV: the highest GPU number in use, plus one
  // (compare_mps.sh deals process R to GPU R % G).
  double top = 0;
  if (!max_over_ranks(k, device, &top)) {
    std::fprintf(stderr, "[rank %d] cannot agree on the GPUs in use\n", o.rank);
    return 1;
  }
  const int gpus = static_cast<int>(top) + 1;
  int rc = 0;
  for (Coll c : o.colls) {
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
      const Shape s = shape(c, o.ranks, bytes);
      if (s.count == 0) continue;
      const Result r = measure(o, k, c, s);
      double wrong = 0;  // over every rank
      if (!max_over_ranks(k, static_cast<double>(r.wrong), &wrong) || !r.ok) {
        std::printf("[rank %d] %s %zu B: failed: %s\n", o.rank, name(c), bytes,
                    r.error.empty() ? "wrong-count exchange" : r.error.c_str());
        rc = 1;
        break;
      }
      if (wrong != 0) rc = 1;
      if (o.rank != 0) continue;
      const double algbw = static_cast<double>(bytes) / (r.us * 1e3);
      csv->row(o.label, name(c), bytes, o.ranks, r.us, algbw, algbw * bus_factor(c, o.ranks), std::string(),
               r.calls, o.replays, 0.0, std::to_string(static_cast<long long>(wrong)), gpus);
      std::printf("%-10s %11zu B  %10.2f us  busbw %8.2f GB/s  wrong %.0f (most on one rank)  (%d calls x %d)\n",
                  name(c), bytes, r.us, algbw * bus_factor(c, o.ranks), wrong, r.calls, o.replays);
    }
  }
  ncclCommDestroy(k.comm);
  return rc;
}
