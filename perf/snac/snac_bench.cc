// snac_bench OUTDIR [--ranks N] [--min BYTES] [--max BYTES] [--collectives A,B,...]
//                   [--calls N] [--replays N]
// Purlin's native collectives with N ranks (default 8) sharing GPU 0 as threads, swept over
// powers of two from --min (default 1K) to --max (default 1G); sizes take K, M and G suffixes.
// Writes OUTDIR/snac.csv (perf/snac/README.md explains the columns).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "atom/bench_common.h"  // Csv
#include "collectives.h"
#include "measure.h"

namespace {

using namespace purlin::snac_bench;

constexpr std::size_t kMiB = std::size_t{1} << 20;
// Left free beside the benchmark's buffers: the communicators' staging and the CUDA runtime.
constexpr std::size_t kMemoryMargin = std::size_t{2} << 30;

struct Options {
  std::string outdir;
  int ranks = 8;
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = std::size_t{1} << 30;
  std::vector<Coll> colls;
  Method method;
};

bool parse_bytes(const std::string& s, std::size_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  std::size_t scale = 1;
  const std::string unit = end;
  if (unit == "K" || unit == "k") scale = std::size_t{1} << 10;
  else if (unit == "M" || unit == "m") scale = kMiB;
  else if (unit == "G" || unit == "g") scale = std::size_t{1} << 30;
  else if (!unit.empty()) return false;
  *out = static_cast<std::size_t>(v) * scale;
  return true;
}

bool parse_options(int argc, char** argv, Options* o) {
  if (argc < 2 || argv[1][0] == '-') return false;
  o->outdir = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (flag == "--ranks") {
      o->ranks = std::atoi(value.c_str());
      if (o->ranks < 1) return false;
    } else if (flag == "--min") {
      if (!parse_bytes(value, &o->min_bytes)) return false;
    } else if (flag == "--max") {
      if (!parse_bytes(value, &o->max_bytes)) return false;
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

// Allocates and zeroes one input and one output buffer per rank; false if they would not fit.
bool allocate(int n, const Shape& s, std::vector<void*>* in, std::vector<void*>* out) {
  std::size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  if (static_cast<std::size_t>(n) * (s.in_bytes + s.out_bytes) + kMemoryMargin > free_bytes) return false;
  for (int r = 0; r < n; ++r) {
    void* a = nullptr;
    void* b = nullptr;
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
  return cudaDeviceSynchronize() == cudaSuccess;
}

void release(std::vector<void*>* in, std::vector<void*>* out) {
  for (void* p : *in) cudaFree(p);
  for (void* p : *out) cudaFree(p);
  in->clear();
  out->clear();
}

}  // namespace

int main(int argc, char** argv) {
  // Eight ranks of this process share the GPU: their streams need hardware queues of their
  // own (device_state.cc: warn_if_queues_are_shared). Read when CUDA starts; a setting in the
  // environment wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", /*overwrite=*/0);
  Options o;
  if (!parse_options(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: %s OUTDIR [--ranks N] [--min BYTES] [--max BYTES] [--collectives A,B,...] "
                 "[--calls N] [--replays N]\n",
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

  // Seconds since start on every log line: where a run's time goes (communicator creation,
  // one size) shows without a profiler.
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double rw = memcpy_rw_GBps(256 * kMiB, 20);
  std::printf("cudaMemcpyAsync device to device, 256 MiB: R = %.0f GB/s read + write\n", rw);
  Ranks ranks;
  std::string error;
  if (!ranks.create(o.ranks, &error)) {
    std::fprintf(stderr, "%d ranks on GPU 0: %s\n", o.ranks, error.c_str());
    return 1;
  }
  std::printf("%d communicators created [%.1f s]\n", o.ranks, seconds());

  purlin::atom::bench::Csv csv(o.outdir + "/snac.csv",
                               "collective,bytes,ranks,us_per_call,algbw_GBps,busbw_GBps,hbm_eff,"
                               "graph_calls,replays,memcpy_rw_GBps");
  if (!csv.good()) {
    std::fprintf(stderr, "cannot write %s/snac.csv\n", o.outdir.c_str());
    return 1;
  }
  int rc = 0;
  for (Coll c : o.colls) {
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
      const Shape s = shape(c, o.ranks, bytes);
      if (s.count == 0) continue;  // smaller than one bf16 element per rank
      std::vector<void*> in, out;
      if (!allocate(o.ranks, s, &in, &out)) {
        release(&in, &out);
        std::printf("%s %zu B: skipped, %d x (%zu + %zu) bytes do not fit\n", name(c), bytes, o.ranks, s.in_bytes,
                    s.out_bytes);
        continue;
      }
      const Timing t = time_collective(ranks, c, s, in, out, o.method);
      release(&in, &out);
      if (!t.ok) {
        std::printf("%s %zu B: failed: %s\n", name(c), bytes, t.error.c_str());
        rc = 1;
        if (cudaDeviceSynchronize() != cudaSuccess) return rc;  // a sticky error: nothing more to measure
        continue;
      }
      const double algbw = static_cast<double>(bytes) / (t.us * 1e3);  // GB/s
      const double busbw = algbw * bus_factor(c, o.ranks);
      std::string eff;
      if (bytes >= kMiB && rw > 0) {
        eff = std::to_string(2.0 * output_bytes(c, o.ranks, bytes) / (t.us * 1e-6) / (rw * 1e9));
      }
      csv.row(name(c), bytes, o.ranks, t.us, algbw, busbw, eff, t.calls, t.replays, rw);
      std::printf("%-15s %11zu B  %10.2f us  algbw %8.2f GB/s  busbw %8.2f GB/s  hbm_eff %s  "
                  "(%d calls x %d) [%.1f s]\n",
                  name(c), bytes, t.us, algbw, busbw, eff.empty() ? "-" : eff.c_str(), t.calls,
                  t.replays, seconds());
      std::fflush(stdout);
    }
  }
  return rc;
}
