#!/usr/bin/env bash
# Runs snac_bench once per configuration of environment overrides and tabulates the figures the
# targets name, so that policy values (src/policy/table.h) are chosen from measurements.
#
# Usage, from the repository root, after building (see README.md):
#   perf/snac/sweep.sh OUTDIR CONFIG...
# CONFIG: space-separated VAR=VALUE assignments for one run, e.g. "PURLIN_ZERO_COPY=0"
#         "PURLIN_ROLES=3,12,1 PURLIN_CHUNK_BYTES=1048576"; "" runs the defaults.
# Environment:
#   PURLIN_BUILD_DIR  build directory (default: build)
#   SNAC_BENCH_ARGS   snac_bench arguments (default: the targets' sizes of AllReduce, AllGather,
#                     AllToAll and ReduceScatter)
#   SWEEP_TIMEOUT     seconds per configuration before it is killed (default 300)
# Leaves OUTDIR/<n>/{config.txt,snac.csv,snac_bench.log} per configuration and OUTDIR/sweep.md.
set -u -o pipefail

out=${1:?usage: perf/snac/sweep.sh OUTDIR CONFIG...}
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
args=${SNAC_BENCH_ARGS:---min 1K --max 256M --collectives AllReduce,AllGather,AllToAll,ReduceScatter}
mkdir -p "$out"

n=0
dirs=()
for config in "$@"; do
  n=$((n + 1))
  dir="$out/$n"
  mkdir -p "$dir"
  echo "$config" > "$dir/config.txt"
  echo "== $n: ${config:-(defaults)}"
  # shellcheck disable=SC2086  # CONFIG and SNAC_BENCH_ARGS are lists of words
  env $config timeout -s KILL "${SWEEP_TIMEOUT:-300}" "$build/perf/snac/snac_bench" "$dir" $args \
    > "$dir/snac_bench.log" 2>&1
  echo "   exit status $? ($(grep -c . "$dir/snac.csv" 2> /dev/null || echo 0) CSV lines)"
  dirs+=("$dir")
done
python3 "$here/summarize.py" --sweep "${dirs[@]}" | tee "$out/sweep.md"
