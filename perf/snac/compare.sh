#!/usr/bin/env bash
# Purlin beside a reference NCCL, in one run: the same snac_bench binary, method and process layout
# (N ranks as threads sharing GPU 0, or dealt over COMPARE_GPUS GPUs) on each library, then both
# side by side with the ratio NCCL time / Purlin time (DESIGN.md section 7). Each library under
# test is preloaded (LD_PRELOAD, library.h), so the log's "library" line names the file that ran.
#
# Usage, from the repository root, after building (README.md):
#   perf/snac/compare.sh OUTDIR [REFERENCE]
# REFERENCE: a libnccl.so.2, or the libnccl.so.2.xz of /work/shared/tools/reference-nccl.sh
#            (unpacked into a temporary directory); default $PURLIN_REFERENCE_NCCL.
# Environment:
#   PURLIN_BUILD_DIR  build directory with snac_bench and Purlin's libnccl.so.2 (default: build)
#   COMPARE_RANKS     rank counts, one pair of runs each (default: "8 1")
#   COMPARE_GPUS      GPUs the ranks are dealt over, snac_bench --gpus (default 1: all share GPU 0)
#   COMPARE_ARGS      snac_bench arguments of every run (default below)
#   COMPARE_TIMEOUT   seconds a run may take before it is killed (default 180): a hang costs that,
#                     not a whole device session
#   COMPARE_SMS       the GPU's SMs (default 132, H200); with k > 1 ranks per GPU (n ranks over G
#                     GPUs: k = n / G, rounded up) the reference gets NCCL_MAX_CTAS =
#                     COMPARE_SMS / k, the share of the SMs Purlin's policy gives each rank of a
#                     shared GPU (src/policy/policy.h: shared_gpu), 16 for 8 ranks on one GPU; with
#                     one rank per GPU no cap
# Leaves in OUTDIR, per rank count N: purlin_rN.csv, nccl_rN.csv, their .log files; environment.txt;
# and from summarize.py --compare: compare.csv, summary.md, speedup.png.
# Exit status 1 when a run failed (a wrong element, a failed size, a kill), 2 on bad usage.
set -u -o pipefail

out=${1:?usage: perf/snac/compare.sh OUTDIR [REFERENCE]}
reference=${2:-${PURLIN_REFERENCE_NCCL:-}}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
bench=$build/perf/snac/snac_bench
purlin_lib=$build/nccl_shim/libnccl.so.2
ranks_list=${COMPARE_RANKS:-8 1}
args=${COMPARE_ARGS:---min 1K --max 256M --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce}
limit=${COMPARE_TIMEOUT:-180}
sms=${COMPARE_SMS:-132}
gpus=${COMPARE_GPUS:-1}

case $gpus in
  '' | *[!0-9]* | 0*) echo "compare.sh: COMPARE_GPUS='$gpus': a positive whole number" >&2; exit 2 ;;
esac
if [ -z "$reference" ]; then
  echo "compare.sh: no reference NCCL: pass REFERENCE or set PURLIN_REFERENCE_NCCL" >&2
  exit 2
fi
# shellcheck source=perf/snac/paths.sh
source "$here/paths.sh"
resolve_paths compare.sh

nccl_lib=$reference
case "$reference" in
  *.xz)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    nccl_lib=$tmp/libnccl.so.2
    xz -dc "$reference" > "$nccl_lib" || { echo "compare.sh: cannot unpack $reference" >&2; exit 2; }
    ;;
esac

# The settings of each library's runs. Both: 32 hardware queues (with CUDA's default of 8 two
# ranks' streams can share one and hang each other: README.md) and no NVLink SHARP (NVLS): Purlin
# never uses NVLink multicast (project rule), so the reference NCCL runs without NVLS too, which
# on several GPUs can leave it short of its best; environment.txt and summary.md say so. The
# reference: several ranks on one GPU (NCCL 2.30 and later refuse them otherwise) and, with k > 1
# ranks per GPU, the CTAs per rank that Purlin's policy allows itself on a shared GPU. The cap is
# a like-for-like CTA budget for ranks sharing a GPU; a rank alone on its GPU gets none.
common=(CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0)

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" describe --always --dirty --abbrev=40 2>/dev/null || echo unknown)"
  echo "purlin library: $purlin_lib ($(sha256sum < "$purlin_lib" | cut -c1-16))"
  echo "reference: $reference ($(sha256sum < "$nccl_lib" | cut -c1-16) unpacked)"
  ref_version=$(dirname "$reference")/VERSION
  [ -f "$ref_version" ] && echo "reference VERSION file: $(cat "$ref_version")"
  echo "rank counts: $ranks_list over $gpus GPU(s), rank r on GPU r % $gpus; timeout per run: $limit s"
  echo "reference NCCL ran without NVLS (NCCL_NVLS_ENABLE=0: Purlin never uses NVLink multicast)"
  echo "inherited environment (CUDA_*, NCCL_*, PURLIN_*, LD_*):"
  env | grep -E '^(CUDA|NCCL|PURLIN|LD)_' | sort | sed 's/^/  /'
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv 2>&1
  echo "commands:"
} > "$out/environment.txt"

status=0
# run LABEL N SETTINGS...: one snac_bench run, its command appended to environment.txt.
run() {
  local label=$1 n=$2
  shift 2
  # env inside timeout: the preloaded library goes to snac_bench alone. -u NCCL_MAX_CTAS: only
  # the settings above decide it, never the caller's environment.
  # shellcheck disable=SC2206  # args is a list of words
  local cmd=(timeout -s KILL "$limit" env -u NCCL_MAX_CTAS "$@" "$bench" "$out" --ranks "$n" --gpus "$gpus"
             --label "$label" --csv "${label}_r$n.csv" $args)
  echo "  $(printf '%q ' "${cmd[@]}")" >> "$out/environment.txt"
  echo "== $label, $n rank(s)"
  "${cmd[@]}" > "$out/${label}_r$n.log" 2>&1
  local rc=$?
  grep -E "^library |failed|wrong elements|not available|skipped|error" "$out/${label}_r$n.log" | head -n 20
  local rows
  rows=$(tail -n +2 "$out/${label}_r$n.csv" 2> /dev/null | grep -c .)
  echo "   exit status $rc, $rows sizes measured"
  [ "$rc" -eq 0 ] || status=1
}

for n in $ranks_list; do
  run purlin "$n" "${common[@]}" "LD_PRELOAD=$purlin_lib"
  reference_env=("${common[@]}" NCCL_MULTI_RANK_GPU_ENABLE=1 "LD_PRELOAD=$nccl_lib")
  per_gpu=$(((n + gpus - 1) / gpus))
  [ "$per_gpu" -gt 1 ] && reference_env+=("NCCL_MAX_CTAS=$((sms / per_gpu))")
  run nccl "$n" "${reference_env[@]}"
done
{
  echo "libraries as loaded:"
  for log in "$out"/purlin_r*.log "$out"/nccl_r*.log; do
    [ -f "$log" ] && echo "  $(basename "$log"): $(grep -m1 "^library " "$log")"
  done
} >> "$out/environment.txt"

if command -v python3 > /dev/null; then
  python3 "$here/summarize.py" --compare "$out" > "$out/summarize.log" 2>&1 || status=1
  cat "$out/summarize.log"
  # The ratio tables; the per-size tables stay in the file.
  [ -f "$out/summary.md" ] && awk '/^### Per size/ { skip = 1 } /^## / { skip = 0 } !skip' "$out/summary.md"
else
  echo "compare.sh: no python3: compare.csv and summary.md not written"
  status=1
fi
exit $status
