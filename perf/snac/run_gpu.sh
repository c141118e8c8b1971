#!/usr/bin/env bash
# Runs the native collective tests and the SNAC benchmark on one GPU and leaves everything in
# OUTDIR: gtest XML and log, the MPS multi-process check, snac.csv, the benchmark log,
# launch_floor.csv (the per-call floor of ranks sharing the GPU), packet.csv (a packet's trip
# between two GPUs, or GPU 0 and itself), summary.md and plots (when matplotlib is available).
#
# Usage, from the repository root, after
#   cmake -S . -B build -G Ninja -DPURLIN_CUDA_ARCHITECTURES=90-real && ninja -C build
# run
#   perf/snac/run_gpu.sh OUTDIR
# Environment:
#   PURLIN_BUILD_DIR   build directory (default: build)
#   SNAC_BENCH_ARGS    extra snac_bench arguments; a quick benchmark (well within 3 minutes):
#                      SNAC_BENCH_ARGS="--max 256M --collectives AllReduce,AllGather,AllToAll"
#   SNAC_SKIP_TESTS=1  benchmark only
set -u -o pipefail

out=${1:?usage: perf/snac/run_gpu.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
mkdir -p "$out"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "snac_bench arguments: ${SNAC_BENCH_ARGS:-(defaults)}"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total \
    --format=csv 2>&1
} > "$out/environment.txt"

status=0

if [ "${SNAC_SKIP_TESTS:-0}" != 1 ]; then
  echo "== native_collectives_test"
  timeout -s KILL 900 "$build/tests/native/native_collectives_test" \
    --gtest_output="xml:$out/native_collectives_test.xml" > "$out/native_collectives_test.log" 2>&1
  test_rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure" "$out/native_collectives_test.log" | tail -n 40
  [ $test_rc -eq 0 ] || { echo "native_collectives_test: exit status $test_rc"; status=1; }

  echo "== MPS, 2 and 4 processes"
  bash "$root/tests/integration/run_mps.sh" "$build" "$out/mps" 2>&1 | tail -n 20
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "run_mps.sh failed"; status=1; }
fi

echo "== snac_bench"
# shellcheck disable=SC2086  # SNAC_BENCH_ARGS is a list of arguments
timeout -s KILL 900 "$build/perf/snac/snac_bench" "$out" ${SNAC_BENCH_ARGS:-} 2>&1 | tee "$out/snac_bench.log" \
  | grep -E "^(library|cudaMemcpy|AllReduce|AllGather |AllToAll )|failed|skipped|error|wrong elements|no CUDA|not native"
bench_rc=${PIPESTATUS[0]}
[ "$bench_rc" -eq 0 ] || { echo "snac_bench: exit status $bench_rc"; status=1; }

echo "== launch_floor"
timeout -s KILL 300 "$build/perf/snac/launch_floor" "$out" > "$out/launch_floor.log" 2>&1
floor_rc=$?
grep -E "^barrier ranks 8" "$out/launch_floor.log"
[ "$floor_rc" -eq 0 ] || { echo "launch_floor: exit status $floor_rc"; status=1; }

echo "== packet_latency"
timeout -s KILL 60 "$build/perf/snac/packet_latency" "$out" > "$out/packet_latency.log" 2>&1
packet_rc=$?
grep -E "^(packet|target|GPU)" "$out/packet_latency.log"
[ "$packet_rc" -eq 0 ] || { echo "packet_latency: exit status $packet_rc"; status=1; }

if command -v python3 > /dev/null; then
  python3 "$here/summarize.py" "$out" > "$out/summary.md" 2> "$out/summarize.log" \
    && cat "$out/summary.md"
fi
exit $status
