// snac_bench OUTDIR [--ranks N] [--gpus G] [--min BYTES] [--max BYTES] [--collectives A,B,...]
//                   [--calls N] [--replays N] [--label NAME] [--csv FILE] [--no-check]
//                   [--check-max BYTES]
// The native collectives with N ranks (default 8) as threads, rank r on GPU r % G (default 1: all
// share GPU 0), swept over powers of two from --min (default 1K) to --max (default 1G); sizes take
// K, M and G suffixes. Each size is first checked exactly (check.h; up to --check-max, default
// 256M), then timed. Runs on Purlin's libnccl.so.2 or, under LD_PRELOAD, on any other
// (library.h); --label names it in the CSV.
// Writes OUTDIR/snac.csv, or OUTDIR/FILE (perf/snac/README.md explains the columns).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "atom/bench_common.h"  // Csv
#include "check.h"
#include "collectives.h"
#include "library.h"
#include "measure.h"

namespace {

using namespace purlin::snac_bench;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Left free beside the benchmark's buffers: the communicators' staging and the CUDA runtime.
constexpr std::size_t kMemoryMargin = std::size_t{2} << 30;

struct Options {
  std::string outdir;
  int ranks = 8;
  int gpus = 1;  // rank r runs on GPU r % gpus (Ranks::device)
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = std::size_t{1} << 30;
  std::vector<Coll> colls;
  Method method;
  std::string label = "purlin";  // the CSV's library column
  std::string csv = "snac.csv";
  bool check = true;
  // A check costs more than the timing (every byte crosses to the host, where the reference is
  // computed: about 1 s for a 256 MiB collective of 8 ranks on an H200 machine), so by default
  // the largest sizes of a 1 GiB sweep go unchecked.
  std::size_t check_max = std::size_t{256} << 20;
};

// The label goes into the CSV unquoted.
bool plain_word(const std::string& s) {
  return !s.empty() && s.find_first_of(",\"' \t\n/") == std::string::npos;
}

bool parse_options(int argc, char** argv, Options* o) {
  if (argc < 2 || argv[1][0] == '-') return false;
  o->outdir = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-check") {
      o->check = false;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (flag == "--ranks") {
      o->ranks = std::atoi(value.c_str());
      if (o->ranks < 1) return false;
    } else if (flag == "--gpus") {
      o->gpus = std::atoi(value.c_str());
      if (o->gpus < 1) return false;
    } else if (flag == "--min") {
      if (!parse_bytes(value, &o->min_bytes)) return false;
    } else if (flag == "--max") {
      if (!parse_bytes(value, &o->max_bytes)) return false;
    } else if (flag == "--check-max") {
      if (!parse_bytes(value, &o->check_max)) return false;
    } else if (flag == "--label") {
      if (!plain_word(value)) return false;
      o->label = value;
    } else if (flag == "--csv") {
      if (!plain_word(value)) return false;
      o->csv = value;
    } else if (flag == "--calls") {
      o->method.max_calls = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--replays") {
      o->method.replays = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--collectives") {
      std::stringstream ss(value);
      for (std::string item; std::getline(ss, item, ',');) {
        Coll c{};
        if (!parse(item, &c)) {
          std::fprintf(stderr, "unknown collective '%s'\n", item.c_str());
          return false;
        }
        o->colls.push_back(c);
      }
    } else {
      return false;
    }
  }
  if (o->colls.empty()) {
    for (int c = 0; c < kColls; ++c) o->colls.push_back(static_cast<Coll>(c));
  }
  return o->min_bytes >= 1 && o->min_bytes <= o->max_bytes;
}

// Allocates and zeroes one input and one output buffer per rank on its GPU; false if they would
// not fit (the ranks of a GPU share its memory).
bool allocate(const Ranks& ranks, const Shape& s, std::vector<void*>* in, std::vector<void*>* out) {
  const int n = ranks.size();
  for (int d = 0; d < ranks.gpus; ++d) {
    std::size_t sharing = 0;
    for (int r = 0; r < n; ++r) sharing += ranks.device(r) == d ? 1 : 0;
    std::size_t free_bytes = 0, total = 0;
    if (cudaSetDevice(d) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return false;
    if (sharing * (s.in_bytes + s.out_bytes) + kMemoryMargin > free_bytes) return false;
  }
  for (int r = 0; r < n; ++r) {
    void* a = nullptr;
    void* b = nullptr;
    if (cudaSetDevice(ranks.device(r)) != cudaSuccess) return false;
    if (cudaMalloc(&a, std::max<std::size_t>(s.in_bytes, 1)) != cudaSuccess ||
        cudaMalloc(&b, std::max<std::size_t>(s.out_bytes, 1)) != cudaSuccess) {
      cudaFree(a);
      return false;
    }
    cudaMemset(a, 0, s.in_bytes);
    cudaMemset(b, 0, s.out_bytes);
    in->push_back(a);
    out->push_back(b);
  }
  // cudaMemset runs on the legacy stream, which the ranks' non-blocking streams do not wait
  // for: without this its kernels would share the GPU with the first collective of the size.
  return ranks.synchronize();
}

void release(std::vector<void*>* in, std::vector<void*>* out) {
  for (void* p : *in) cudaFree(p);
  for (void* p : *out) cudaFree(p);
  in->clear();
  out->clear();
}

}  // namespace

int main(int argc, char** argv) {
  // By default eight ranks of this process share a GPU: their streams need hardware queues of their
  // own (device_state.cc: warn_if_queues_are_shared). Read when CUDA starts; a setting in the
  // environment wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  Options o;
  if (!parse_options(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s OUTDIR [--ranks N] [--gpus G] [--min BYTES] [--max BYTES] [--collectives A,B,...] "
                 "[--calls N] [--replays N] [--label NAME] [--csv FILE] [--no-check] [--check-max BYTES]\n",
                 argv[0]);
    return 2;
  }
  setenv("PURLIN_TIMEOUT_S", "60", /*overwrite=*/0);  // a hang becomes an error
  std::setvbuf(stdout, nullptr, _IOLBF, 0);            // each result line survives a kill
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  o.gpus = std::min(o.gpus, o.ranks);  // more GPUs than ranks leaves the rest idle
  if (o.gpus > devices) {
    std::fprintf(stderr, "--gpus %d: only %d CUDA device%s visible\n", o.gpus, devices, devices == 1 ? "" : "s");
    return 1;
  }

  // Seconds since start on every log line: where a run's time goes (communicator creation,
  // one size) shows without a profiler.
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const Library& lib = library();
  std::printf("library %s: NCCL version %s (%d), %s; Purlin's entry points %s\n", o.label.c_str(),
              version_string(lib.version).c_str(), lib.version, lib.path.empty() ? "(path unknown)" : lib.path.c_str(),
              lib.comm_is_native != nullptr ? "present" : "absent");
  // GPU 0's alone, also when the ranks are spread over several: hbm_eff relates to it.
  const double rw = memcpy_rw_GBps(0, 256 * kMiB, 20);
  if (rw > 0) {
    std::printf("GPU 0: cudaMemcpyAsync device to device, 256 MiB: R = %.0f GB/s read + write\n", rw);
  } else {
    std::printf("GPU 0: cudaMemcpyAsync device to device failed: no R, hbm_eff left empty\n");
  }
  Ranks ranks;
  std::string error;
  if (!ranks.create(o.ranks, o.gpus, &error)) {
    std::fprintf(stderr, "%d ranks on %d GPU(s): %s\n", o.ranks, ranks.gpus, error.c_str());
    return 1;
  }
  std::printf("%d communicators created, rank r on GPU r %% %d [%.1f s]\n", o.ranks, ranks.gpus, seconds());
  std::unique_ptr<Checker> checker;
  if (o.check) {
    checker = std::make_unique<Checker>(o.ranks);
    if (!checker->unusable().empty()) {
      std::printf("exact checks skipped: %s\n", checker->unusable().c_str());
      checker.reset();
    }
  }

  const std::string csv_path = o.outdir + "/" + o.csv;
  purlin::atom::bench::Csv csv(csv_path,
                               "library,collective,bytes,ranks,us_per_call,algbw_GBps,busbw_GBps,hbm_eff,"
                               "graph_calls,replays,memcpy_rw_GBps,wrong,gpus");
  if (!csv.good()) {
    std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
    return 1;
  }
  int rc = 0;
  for (Coll c : o.colls) {
    if (!available(c)) {
      std::printf("%s: not available in this library, skipped\n", name(c));
      continue;
    }
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
      const Shape s = shape(c, o.ranks, bytes);
      if (s.count == 0) continue;  // smaller than one bf16 element per rank
      std::vector<void*> in, out;
      if (!allocate(ranks, s, &in, &out)) {
        release(&in, &out);
        std::printf("%s %zu B: skipped, %d x (%zu + %zu) bytes do not fit\n", name(c), bytes, o.ranks, s.in_bytes,
                    s.out_bytes);
        continue;
      }
      // Empty: not checked (--no-check, or above --check-max).
      std::string wrong;
      if (checker && bytes <= o.check_max) {
        const CheckResult k = checker->run(ranks, c, s, in, out);
        if (!k.ran) {
          release(&in, &out);
          std::printf("%s %zu B: failed: check: %s\n", name(c), bytes, k.error.c_str());
          rc = 1;
          if (!ranks.synchronize()) return rc;  // a sticky error: nothing more to measure
          continue;
        }
        wrong = std::to_string(k.wrong);
        if (k.wrong != 0) {
          std::printf("%s %zu B: %zu wrong elements; first at %s\n", name(c), bytes, k.wrong, k.first_bad.c_str());
          rc = 1;
        }
      }
      const Timing t = time_collective(ranks, c, s, in, out, o.method);
      release(&in, &out);
      if (!t.ok) {
        std::printf("%s %zu B: failed: %s\n", name(c), bytes, t.error.c_str());
        rc = 1;
        if (!ranks.synchronize()) return rc;  // a sticky error: nothing more to measure
        continue;
      }
      const double algbw = static_cast<double>(bytes) / (t.us * 1e3);  // GB/s
      const double busbw = algbw * bus_factor(c, o.ranks);
      std::string eff;
      if (bytes >= kMiB && rw > 0) {
        eff = std::to_string(2.0 * output_bytes(c, o.ranks, bytes) / (t.us * 1e-6) / (rw * 1e9));
      }
      csv.row(o.label, name(c), bytes, o.ranks, t.us, algbw, busbw, eff, t.calls, t.replays, rw, wrong, ranks.gpus);
      std::printf("%-15s %11zu B  %10.2f us  algbw %8.2f GB/s  busbw %8.2f GB/s  hbm_eff %s  wrong %s  "
                  "(%d calls x %d) [%.1f s]\n",
                  name(c), bytes, t.us, algbw, busbw, eff.empty() ? "-" : eff.c_str(),
                  wrong.empty() ? "-" : wrong.c_str(), t.calls, t.replays, seconds());
      std::fflush(stdout);
    }
  }
  return rc;
}
