#!/usr/bin/env bash
# A rank's process dies mid-collective (issue 13, item 6): under an MPS daemon of its own, runs
# native_peer_death as N processes sharing GPU 0, the last of which SIGKILLs itself inside an
# AllReduce. Every survivor must see ncclCommGetAsyncError turn ncclRemoteError naming the dead
# rank, return from ncclCommAbort within a second, and then run an exact AllReduce on a new
# communicator of the survivors. Usage:
#
#   tests/integration/run_peer_death.sh BUILD_DIR OUTDIR
#
# BUILD_DIR  a Purlin build holding tests/native/native_peer_death
# OUTDIR     one log per process (death_n<N>_rank<R>.log) and the MPS daemon's logs (mps_log/)
#
# Exits 0 when every survivor of every run passed and every victim died by SIGKILL, 1 otherwise,
# 2 on usage errors. Without root, nvidia-cuda-mps-control or a GPU it reports SKIPPED and exits
# 0. Optional environment: DEATH_WORLDS="3 4" (process counts, at least 2), DEATH_TIMEOUT=180
# (seconds per run), NCCL_DEBUG (default WARN, so that the logs show the WARN naming the peer).
set -u -o pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR" >&2
  exit 2
fi
bin="$1/tests/native/native_peer_death"
out=$2
[[ -x $bin ]] || { echo "error: $bin not found (build the native_peer_death target)" >&2; exit 2; }
mkdir -p -- "$out" || exit 2

# shellcheck source=tests/integration/mps_daemon.sh
source "$(dirname "$0")/mps_daemon.sh"
start_private_mps run_peer_death.sh "$out"
# Every process on one GPU: PURLIN_TEST_DEVICE's (default 0), never a launcher's LOCAL_RANK,
# which would be the same for every process this script starts.
unset LOCAL_RANK
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

timeout_s=${DEATH_TIMEOUT:-180}
failed=0
for n in ${DEATH_WORLDS:-3 4}; do
  ids=$tmp/ids.$n
  mkdir -p "$ids"
  pids=()
  for ((r = 0; r < n; ++r)); do
    timeout -k 10 "$timeout_s" "$bin" "$r" "$n" "$ids" > "$out/death_n${n}_rank${r}.log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < n; ++r)); do
    wait "${pids[$r]}"
    rc=$?
    log=$out/death_n${n}_rank${r}.log
    if ((r == n - 1)); then
      # The victim: killed by its own SIGKILL (timeout reports 128 + 9), after saying so.
      if [[ $rc -eq 137 ]] && grep -q "killing itself" "$log"; then
        echo "$n processes, rank $r (victim): died by SIGKILL as planned"
      else
        echo "$n processes, rank $r (victim): FAIL: exit status $rc (log: $log)"
        failed=1
      fi
      continue
    fi
    pass=$(grep -c "PASS" "$log")
    fail=$(grep -c "FAIL" "$log")
    if [[ $rc -eq 0 ]]; then
      echo "$n processes, rank $r: PASS ($pass checks)"
    else
      case $rc in
        124|137) why="timed out after ${timeout_s}s" ;;
        77) why="SKIPPED (no CUDA device visible to the process)" ;;
        *) why="exit status $rc" ;;
      esac
      echo "$n processes, rank $r: FAIL: $why; $pass passed, $fail failed (log: $log)"
      grep "FAIL" "$log" | head -n 10
      failed=1
    fi
    grep -m1 "stopped: its bootstrap connection" "$log" | sed 's/^/    /'
  done
done
exit $failed
