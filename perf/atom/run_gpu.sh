#!/usr/bin/env bash
# Runs the Atom's GPU tests and benchmarks on one GPU (about 3-4 minutes on an H200) and leaves
# everything in OUTDIR: gtest XML and logs, copy.csv, reduce.csv, the benchmark log, summary.md
# and plots (when matplotlib is available).
#
# Usage, from the repository root, after
#   cmake -S . -B build -G Ninja -DPURLIN_CUDA_ARCHITECTURES=90-real && ninja -C build
# run
#   perf/atom/run_gpu.sh OUTDIR
# PURLIN_BUILD_DIR overrides the build directory (default: build).
set -u -o pipefail

out=${1:?usage: perf/atom/run_gpu.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
mkdir -p "$out"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total \
    --format=csv 2>&1
} > "$out/environment.txt"

status=0

echo "== atom_gpu_test"
timeout -s KILL 120 "$build/tests/atom/atom_gpu_test" --gtest_output="xml:$out/atom_gpu_test.xml" \
  > "$out/atom_gpu_test.log" 2>&1
test_rc=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure|difference" "$out/atom_gpu_test.log" | tail -n 40
[ $test_rc -eq 0 ] || { echo "atom_gpu_test: exit status $test_rc"; status=1; }

# A crash or hang (killed: 137; trap: 134; fault: 139), or failures of the bulk-copy (TMA) Atom:
# run again without it, and benchmark without it, so that the other datapaths still report.
if [ $test_rc -ne 0 ] && { [ $test_rc -ge 128 ] || grep -q "sm90_bulk" "$out/atom_gpu_test.log"; }; then
  export PURLIN_ATOM_SKIP_BULK=1
  echo "== atom_gpu_test without the bulk-copy Atom (PURLIN_ATOM_SKIP_BULK=1)"
  timeout -s KILL 120 "$build/tests/atom/atom_gpu_test" \
    --gtest_output="xml:$out/atom_gpu_test_nobulk.xml" > "$out/atom_gpu_test_nobulk.log" 2>&1
  echo "exit status $?"
  grep -E "^\[  (PASSED|FAILED) |tests ran" "$out/atom_gpu_test_nobulk.log" | tail -n 20
fi

echo "== atom_host_test"
timeout -s KILL 60 "$build/tests/atom/atom_host_test" --gtest_output="xml:$out/atom_host_test.xml" \
  > "$out/atom_host_test.log" 2>&1 || { echo "atom_host_test failed"; status=1; }
tail -n 3 "$out/atom_host_test.log"

# Each benchmark on its own, so that one failing part does not cost the other's data.
# peer: GPUs 0 and 1, or GPU 0 against itself on a machine with one (peer_bench.cu).
for part in copy reduce placement peer; do
  echo "== atom_bench $part"
  timeout -s KILL 150 "$build/perf/atom/atom_bench" "$out" "$part" 2>&1 | tee -a "$out/atom_bench.log" \
    | grep -E "^(copy|reduce|placement|peer|pull|push)|failed|error|no CUDA"
  bench_rc=${PIPESTATUS[0]}
  [ "$bench_rc" -eq 0 ] || { echo "atom_bench $part: exit status $bench_rc"; status=1; }
done

if command -v python3 > /dev/null; then
  python3 "$here/summarize.py" "$out" > "$out/summary.md" 2> "$out/summarize.log" \
    && cat "$out/summary.md"
fi
exit $status
