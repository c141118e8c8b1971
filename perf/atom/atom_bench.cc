// atom_bench OUTDIR [copy|reduce|placement|profile|all]: the Atom benchmarks (perf/atom/README.md). Writes
// OUTDIR/copy.csv, OUTDIR/reduce.csv and OUTDIR/placement.csv.
// atom_bench OUTDIR peer [SRC DST]: copies between two GPUs (default 0 and 1, or 0 and 0 with one
// GPU; peer_bench.cu): OUTDIR/peer.csv.
#include "bench_common.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace purlin::atom::bench {

Device query_device() {
  Device d;
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    return d;
  }
  d.sms = prop.multiProcessorCount;
  d.max_smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  d.cc = prop.major * 10 + prop.minor;
  d.name = prop.name;
  const char* skip = std::getenv("PURLIN_ATOM_SKIP_BULK");
  d.bulk = d.cc >= 90 && !(skip != nullptr && std::string(skip) == "1");
  return d;
}

}  // namespace purlin::atom::bench

int main(int argc, char** argv) {
  using namespace purlin::atom::bench;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [copy|reduce|placement|profile|all]\n       %s OUTDIR peer [SRC DST]\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const std::string what = argc > 2 ? argv[2] : "all";
  const Device dev = query_device();
  if (dev.sms == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  int rc = 0;
  if (what == "copy" || what == "all") rc |= run_copy_bench(out, dev);
  if (what == "reduce" || what == "all") rc |= run_reduce_bench(out, dev);
  if (what == "placement" || what == "all") rc |= run_placement_bench(out, dev);
  if (what == "profile") rc |= run_profile_targets(dev);  // for ncu; not part of "all"
  if (what == "peer") {  // not part of "all": it needs a second GPU to mean what it says
    int count = 0;
    (void)cudaGetDeviceCount(&count);
    const int src = argc > 3 ? std::atoi(argv[3]) : 0;
    const int dst = argc > 4 ? std::atoi(argv[4]) : (count > 1 ? 1 : 0);
    rc |= run_peer_bench(out, dev, src, dst);
  }
  return rc;
}
