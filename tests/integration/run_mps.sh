#!/usr/bin/env bash
# Several processes sharing one GPU under MPS (DESIGN.md section 5): starts an MPS control daemon
# of its own, runs native_mps_ranks as 2 and then 4 processes (one rank each, all on GPU 0) and
# stops the daemon again, also on failure or interruption; or, with PROCESS_GPUS, the processes
# dealt over several GPUs. Usage:
#
#   tests/integration/run_mps.sh BUILD_DIR OUTDIR
#
# BUILD_DIR  a Purlin build holding tests/native/native_mps_ranks
# OUTDIR     one log per process (mps_n<N>_rank<R>.log) and the MPS daemon's logs (mps_log/)
#
# Exits 0 when every process of every run passed, 1 when any failed, 2 on usage errors. Without
# root, without nvidia-cuda-mps-control or without a GPU it reports SKIPPED and exits 0.
# Optional environment: MPS_WORLDS="2 4" (process counts), MPS_TIMEOUT=300 (seconds per run),
# MPS_RANK_WRAPPER (a command each process runs under, e.g. "compute-sanitizer --tool memcheck
# --error-exitcode 3": each process then checks its own kernels while the ranks still overlap),
# PROCESS_GPUS=G (default 1): process R runs on GPU R % G; when no GPU gets two processes of a
# run, no MPS daemon is started (nor needed: one process per GPU, as a job on several GPUs runs).
set -u -o pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
bin="$1/tests/native/native_mps_ranks"
out=$2
[[ -x $bin ]] || { echo "error: $bin not found (build the native_mps_ranks target)" >&2; exit 2; }
mkdir -p -- "$out" || exit 2

gpus=${PROCESS_GPUS:-1}
[[ $gpus =~ ^[1-9][0-9]*$ ]] || { echo "error: PROCESS_GPUS '$gpus' is not a positive whole number" >&2; exit 2; }
worlds=${MPS_WORLDS:-2 4}
# Processes that share a GPU run their kernels at the same time only under MPS (without it the
# GPU time-slices between processes, and ranks that wait for each other hang).
shared=0
for n in $worlds; do ((n > gpus)) && shared=1; done
if ((shared)); then
  # shellcheck source=tests/integration/mps_daemon.sh
  source "$(dirname "$0")/mps_daemon.sh"
  start_private_mps run_mps.sh "$out"
else
  tmp=$(mktemp -d)
  trap 'rm -rf -- "$tmp"' EXIT
  echo "one process per GPU over $gpus GPUs: no MPS daemon"
fi
# Each process on the GPU this script names (PURLIN_TEST_DEVICE), never a launcher's LOCAL_RANK,
# which would be the same for every process it starts.
unset LOCAL_RANK

timeout_s=${MPS_TIMEOUT:-300}
failed=0
for n in $worlds; do
  id_file=$tmp/unique_id.$n
  rm -f -- "$id_file"
  pids=()
  for ((r = 0; r < n; ++r)); do
    # shellcheck disable=SC2086  # MPS_RANK_WRAPPER is a command line: split into words
    PURLIN_TEST_DEVICE=$((r % gpus)) timeout -k 10 "$timeout_s" ${MPS_RANK_WRAPPER:-} "$bin" "$r" "$n" "$id_file" \
      > "$out/mps_n${n}_rank${r}.log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < n; ++r)); do
    wait "${pids[$r]}"
    rc=$?
    log=$out/mps_n${n}_rank${r}.log
    pass=$(grep -c "PASS" "$log")
    fail=$(grep -c "FAIL" "$log")
    if [[ $rc -eq 0 ]]; then
      echo "$n processes, rank $r: PASS ($pass cases)"
    else
      case $rc in
        124|137) why="timed out after ${timeout_s}s" ;;
        77) why="SKIPPED (no CUDA device visible to the process)" ;;
        *) why="exit status $rc" ;;
      esac
      echo "$n processes, rank $r: FAIL: $why; $pass passed, $fail failed (log: $log)"
      grep -A4 "FAIL" "$log" | head -n 20
      failed=1
    fi
  done
done
((shared)) && echo "MPS servers: $(echo get_server_list | nvidia-cuda-mps-control 2>/dev/null | tr '\n' ' ')"
exit $failed
