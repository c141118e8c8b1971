#!/usr/bin/env bash
# The main job: installs missing build dependencies, builds Purlin for the local GPU and
# runs the benchmarks, writing CSV results under perf/<layer>/results/ (commit them with
# the command that produced them; see perf/<layer>/README.md).
#
#   PURLIN_BUILD_DIR   build directory (default: <repo>/build-perf)
#   PURLIN_CMAKE_ARGS  extra CMake arguments (default: the architecture of GPU 0)
#   PURLIN_RESULTS     Atom results directory (default: perf/atom/results/<UTC date-time>)
#   PURLIN_SNAC_RESULTS  collective results directory (default: perf/snac/results/<UTC date-time>)
#   PURLIN_REFERENCE_NCCL  a reference libnccl.so.2 or libnccl.so.2.xz to compare with (default:
#                      .device/refnccl/libnccl.so.2.xz when present, which
#                      /work/shared/tools/reference-nccl.sh .device/refnccl makes); the comparison
#                      goes to perf/snac/results/<UTC date-time>-compare
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build-perf}
stamp=$(date -u +%Y%m%d-%H%M)
results=${PURLIN_RESULTS:-$root/perf/atom/results/$stamp}
snac_results=${PURLIN_SNAC_RESULTS:-$root/perf/snac/results/$stamp}

bash "$root/cmake/install-deps.sh"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "perf/run.sh: no NVIDIA GPU visible; the benchmarks need one (SKIPPED)"
  exit 0
fi
# Build for the GPU that will run the benchmarks only: a full multi-architecture build
# adds minutes and measures nothing more.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d '. ')
args=${PURLIN_CMAKE_ARGS:--DPURLIN_CUDA_ARCHITECTURES=${cc}-real}
# shellcheck disable=SC2086  # a list of arguments
cmake -S "$root" -B "$build" -G Ninja -DPURLIN_BUILD_TESTS=ON $args
cmake --build "$build" -j "$(nproc)"
mkdir -p "$results"
status=0
PURLIN_BUILD_DIR="$build" bash "$root/perf/atom/run_gpu.sh" "$results" || status=1
mkdir -p "$snac_results"
PURLIN_BUILD_DIR="$build" bash "$root/perf/snac/run_gpu.sh" "$snac_results" || status=1
echo "perf/run.sh: results in $results and $snac_results"

# Purlin beside the reference NCCL (perf/snac/compare.sh), when one is at hand.
reference=${PURLIN_REFERENCE_NCCL:-}
if [ -z "$reference" ] && [ -f "$root/.device/refnccl/libnccl.so.2.xz" ]; then
  reference=$root/.device/refnccl/libnccl.so.2.xz
fi
if [ -n "$reference" ]; then
  compare_results=$root/perf/snac/results/$stamp-compare
  PURLIN_BUILD_DIR="$build" bash "$root/perf/snac/compare.sh" "$compare_results" "$reference" || status=1
  echo "perf/run.sh: comparison with NCCL in $compare_results"
else
  echo "perf/run.sh: comparison with NCCL skipped: no reference library (PURLIN_REFERENCE_NCCL is not set" \
    "and .device/refnccl/libnccl.so.2.xz is absent; /work/shared/tools/reference-nccl.sh makes one)"
fi
exit $status
