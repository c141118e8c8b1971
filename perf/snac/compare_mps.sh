#!/usr/bin/env bash
# Purlin beside a reference NCCL with one rank per process, the processes sharing GPU 0 (or dealt
# over COMPARE_GPUS GPUs) under a private MPS daemon: mps_bench (one rank per process, the
# DESIGN.md section 7 method) on each library, then both side by side with summarize.py --compare
# (compare.sh does the same for ranks as threads).
#
# Usage, from the repository root, after building mps_bench (README.md), as root:
#   perf/snac/compare_mps.sh OUTDIR REFERENCE
# REFERENCE: a libnccl.so.2 (NCCL 2.30 or later: earlier ones refuse two ranks on one GPU).
# Environment:
#   PURLIN_BUILD_DIR  build directory with perf/snac/mps_bench and Purlin's libnccl.so.2 (default: build)
#   MPS_RANKS         processes (default 4)
#   MPS_ARGS          mps_bench arguments of every run (default: AllReduce and AllGather, 1K-256M)
#   MPS_TIMEOUT       seconds a library's run may take before its processes are killed (default 300)
#   COMPARE_GPUS      GPUs the processes are dealt over, process R on GPU R % COMPARE_GPUS
#                     (mps_bench's PURLIN_BENCH_DEVICE; default 1: all share GPU 0)
#   COMPARE_SMS       the GPU's SMs (default 132): with k > 1 processes per GPU the reference gets
#                     NCCL_MAX_CTAS = COMPARE_SMS / k, as in compare.sh; with one per GPU no cap
# NCCL_NVLS_ENABLE=0 for both: Purlin never uses NVLink multicast, so the reference NCCL runs
# without NVLS too (environment.txt, and so summary.md, says so).
# Leaves in OUTDIR: purlin_rN.csv, nccl_rN.csv, one log per process and library, environment.txt,
# compare.csv, summary.md, speedup.png. Exit status 1 when a run failed, 2 on bad usage; without
# root, MPS or a GPU it reports SKIPPED and exits 0.
set -u -o pipefail

out=${1:?usage: perf/snac/compare_mps.sh OUTDIR REFERENCE}
reference=${2:?usage: perf/snac/compare_mps.sh OUTDIR REFERENCE}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
bench=$build/perf/snac/mps_bench
purlin_lib=$build/nccl_shim/libnccl.so.2
n=${MPS_RANKS:-4}
args=${MPS_ARGS:---min 1K --max 256M --collectives AllReduce,AllGather}
limit=${MPS_TIMEOUT:-300}
sms=${COMPARE_SMS:-132}
gpus=${COMPARE_GPUS:-1}
case $gpus in
  '' | *[!0-9]* | 0*) echo "compare_mps.sh: COMPARE_GPUS='$gpus': a positive whole number" >&2; exit 2 ;;
esac
per_gpu=$(((n + gpus - 1) / gpus))

# shellcheck source=perf/snac/paths.sh
source "$here/paths.sh"
resolve_paths compare_mps.sh

# shellcheck source=tests/integration/mps_daemon.sh
source "$root/tests/integration/mps_daemon.sh"
start_private_mps compare_mps.sh "$out"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" describe --always --dirty --abbrev=40 2>/dev/null || echo unknown)"
  echo "purlin library: $purlin_lib ($(sha256sum < "$purlin_lib" | cut -c1-16))"
  echo "reference: $reference ($(sha256sum < "$reference" | cut -c1-16))"
  echo "processes: $n under MPS over $gpus GPU(s), process R on GPU R % $gpus; timeout per library: $limit s"
  echo "reference NCCL ran without NVLS (NCCL_NVLS_ENABLE=0: Purlin never uses NVLink multicast)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv 2>&1
  echo "commands (one per process, R = 0..$((n - 1))):"
} > "$out/environment.txt"

status=0
# run LABEL SETTINGS...: n processes of mps_bench, waited for together.
run() {
  local label=$1
  shift
  local id="$tmp/$label.id"
  # PURLIN_BENCH_DEVICE places each process (it wins over a launcher's LOCAL_RANK).
  local settings=(env -u NCCL_MAX_CTAS -u LOCAL_RANK NCCL_NVLS_ENABLE=0 "$@")
  # shellcheck disable=SC2206  # args is a list of words
  local cmd=("$bench" "$out" --ranks "$n" --id-file "$id" --label "$label" --csv "${label}_r$n.csv" $args)
  echo "  $(printf '%q ' "${settings[@]}")PURLIN_BENCH_DEVICE=\$((R % $gpus)) $(printf '%q ' "${cmd[@]}")--rank R" \
    >> "$out/environment.txt"
  echo "== $label, $n processes"
  local pids=()
  for ((r = 0; r < n; ++r)); do
    timeout -s KILL "$limit" "${settings[@]}" "PURLIN_BENCH_DEVICE=$((r % gpus))" "${cmd[@]}" --rank "$r" \
      > "$out/${label}_r${n}_rank$r.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  grep -hE "^library |failed|error" "$out/${label}_r${n}"_rank*.log | head -n 10
  local rows
  rows=$(tail -n +2 "$out/${label}_r$n.csv" 2> /dev/null | grep -c .)
  echo "   exit status $rc, $rows sizes measured"
  [ "$rc" -eq 0 ] || status=1
}

run purlin "LD_PRELOAD=$purlin_lib"
reference_env=(NCCL_MULTI_RANK_GPU_ENABLE=1 "LD_PRELOAD=$reference")
# The cap is a like-for-like CTA budget for processes sharing a GPU (compare.sh).
[ "$per_gpu" -gt 1 ] && reference_env+=("NCCL_MAX_CTAS=$((sms / per_gpu))")
run nccl "${reference_env[@]}"

python3 "$here/summarize.py" --compare "$out" > "$out/summarize.log" 2>&1 || status=1
cat "$out/summarize.log"
[ -f "$out/summary.md" ] && awk '/^### Per size/ { skip = 1 } /^## / { skip = 0 } !skip' "$out/summary.md"
exit $status
