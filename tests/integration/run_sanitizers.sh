#!/usr/bin/env bash
# Runs a subset of the native GPU tests under compute-sanitizer's memcheck, racecheck and
# synccheck, and says per tool whether it found anything. The subset reaches every kernel
# family: latency-regime packets with changing data (Soak), both regimes of a composition
# (AllReduce) and of a one-hop copy (Broadcast) over every type, op and count at 4 ranks
# (Matrix W4), graphs captured per thread, and grouped send/recv (P2p W4).
#
#   tests/integration/run_sanitizers.sh BUILD_DIR OUTDIR
#
# Environment:
#   SANITIZE_TOOLS="memcheck racecheck synccheck"  the tools, one run each
#   SANITIZE_FILTER=...                            a gtest filter instead of the subset below
#   SANITIZE_TIMEOUT=600                           seconds a tool's run may take (the sanitizers
#                                                  slow kernels down 10-100x)
#   PURLIN_STRESS_CALLS (default here 24)          the soak's calls; fewer than its default of 96,
#                                                  since every call runs under the sanitizer
# Leaves OUTDIR/<tool>.log; exit status 1 when a tool reported anything or a run failed.
set -u -o pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
build=$1
out=$2
binary=$build/tests/native/native_collectives_test
[[ -x $binary ]] || { echo "error: $binary not built" >&2; exit 2; }
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found: SKIPPED"; exit 0; }
mkdir -p -- "$out" || exit 2

tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck}
filter=${SANITIZE_FILTER:-Soak.LatencyPacketsChangingData:Native/Matrix.*/W4_AllReduce:Native/Matrix.*/W4_Broadcast:Native/Graph.AllReduceCapturedPerThread/W4:Native/P2p.GroupedPatternsEveryTypeExact/W4}
limit=${SANITIZE_TIMEOUT:-600}
export PURLIN_STRESS_CALLS=${PURLIN_STRESS_CALLS:-24}
# The ranks share one GPU as threads: 32 hardware queues, or two ranks' streams may share one
# and hang each other (README.md), which a slowed-down run makes likelier.
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}

status=0
for tool in $tools; do
  log=$out/$tool.log
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  timeout -k 10 "$limit" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 3 \
    "$binary" --gtest_filter="$filter" >"$log" 2>&1
  rc=$?
  # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: N hazards displayed".
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)
  tests=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$log" | tr '\n' ' ')
  verdict=clean
  if [[ $rc -ne 0 ]]; then
    verdict="exit status $rc"
    status=1
  elif ! grep -qE "SUMMARY: 0 (errors|hazards)" <<<"$summary"; then
    verdict="findings"
    status=1
  fi
  echo "$tool: $verdict; ${summary:-no summary line}; $tests"
done
exit $status
