#!/usr/bin/env bash
# Runs NVIDIA's unmodified nccl-tests through Purlin (LD_PRELOAD) on one GPU (or NCCL_TESTS_GPUS)
# and checks every result. Usage:
#
#   tests/integration/run_nccl_tests.sh NCCL_TESTS_DIR PURLIN_LIB OUTDIR
#
# NCCL_TESTS_DIR  folder holding the *_perf binaries (built with MPI=0)
# PURLIN_LIB      Purlin's libnccl.so.2, preloaded into every run; the word "none" runs
#                 the libnccl.so.2 the binaries find themselves (a baseline: no preload,
#                 no routing check), to tell a Purlin bug from a test or setup problem
# OUTDIR          one log per run is written here (stdout and stderr together)
#
# A run passes when it exits 0, prints data lines, every checked "#wrong" value is 0,
# its "Out of bounds values" footer says 0, and Purlin's routing line is in the log.
# Optional environment:
#   NCCL_TESTS_ONLY="all_reduce all_gather"  run only these binaries (names without _perf)
#   NCCL_TESTS_TIMEOUT=120                   seconds before one run is killed (a hang fails)
#   NCCL_TESTS_ITERS=5 NCCL_TESTS_WARMUP=2   timed / warm-up iterations per size
#   NCCL_TESTS_SWEEP=all                     one run per binary, every type and (reductions) every
#                                            op at once: "-d all -o all" (the default splits the
#                                            ops and types a real NCCL 2.28 rejects, see below)
#   NCCL_TESTS_GPUS=1                        GPUs per run, one rank each, all driven by the
#                                            one test process: "-g N"
#   NCCL_TESTS_EXTRA="-R 1"                  arguments added to every run (e.g. buffer
#                                            registration, -R, in nccl-tests that have it)
# Everything else in the environment (e.g. the setting that points Purlin at the real
# NCCL) passes through unchanged.
set -u -o pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 NCCL_TESTS_DIR PURLIN_LIB OUTDIR" >&2
  exit 2
fi
tests_dir=$1
if [[ $2 == none ]]; then
  purlin_lib=""
else
  purlin_lib=$(realpath -e -- "$2" 2>/dev/null) || { echo "error: PURLIN_LIB '$2' does not exist" >&2; exit 2; }
fi
out_dir=$3
[[ -d $tests_dir ]] || { echo "error: NCCL_TESTS_DIR '$tests_dir' is not a directory" >&2; exit 2; }
mkdir -p -- "$out_dir" || exit 2

timeout_s=${NCCL_TESTS_TIMEOUT:-120}
iters=${NCCL_TESTS_ITERS:-5}
warmup=${NCCL_TESTS_WARMUP:-2}
only=${NCCL_TESTS_ONLY:-}
sweep=${NCCL_TESTS_SWEEP:-split}
gpus=${NCCL_TESTS_GPUS:-1}
[[ $gpus =~ ^[1-9][0-9]*$ ]] || { echo "error: NCCL_TESTS_GPUS '$gpus' is not a positive whole number" >&2; exit 2; }

# NCCL_TESTS_GPUS GPUs, data check on every size, a x4 sweep 8 B .. 64 MiB, every data type.
common_args=(-g "$gpus" -c 1 -b 8 -e 64M -f 4 -n "$iters" -w "$warmup")
read -r -a extra_common <<<"${NCCL_TESTS_EXTRA:-}"
common_args+=("${extra_common[@]}")
preload=()
[[ -n $purlin_lib ]] && preload=(LD_PRELOAD="$purlin_lib")
echo "nccl-tests: $tests_dir; preload: ${purlin_lib:-none}; GPUs: $gpus; extra: ${NCCL_TESTS_EXTRA:-none}; logs: $out_dir"

# Each case: "<label>|<binary>|<extra arguments>". Reductions sweep every op: sum, prod,
# max and min over every data type; avg and mulsum (PreMulSum) over every type but fp8,
# because NCCL 2.28 itself rejects them for fp8 with ncclInvalidArgument (seen
# on an H200 with the real NCCL alone, 2.28.3 and 2.28.9, no Purlin involved), and
# nccl-tests stops at the first error. The extra cases cover CUDA graph capture and
# buffers misaligned by one element, which the plain sweep never produces.
reduction_cases() {  # label prefix, binary, extra arguments
  local op t
  for op in sum prod max min; do cases+=("$1-$op|$2|-d all -o $op $3"); done
  for op in avg mulsum; do
    for t in int8 uint8 int32 uint32 int64 uint64 half float double bfloat16; do
      cases+=("$1-$op-$t|$2|-d $t -o $op $3")
    done
  done
}
cases=()
for bin in "$tests_dir"/*_perf; do
  [[ -x $bin ]] || continue
  name=$(basename -- "$bin")
  short=${name%_perf}
  if [[ -n $only && " $only " != *" $short "* ]]; then continue; fi
  if [[ $sweep == all ]]; then
    case $short in
      all_reduce|reduce_scatter|reduce) cases+=("$name|$name|-d all -o all") ;;
      *) cases+=("$name|$name|-d all") ;;
    esac
    continue
  fi
  case $short in
    all_reduce|reduce_scatter|reduce) reduction_cases "$name" "$name" "" ;;
    *) cases+=("$name|$name|-d all") ;;
  esac
  case $short in
    all_reduce)
      cases+=("$name-graph|$name|-d all -o sum -G 4")
      reduction_cases "$name-unaligned" "$name" "-u 1" ;;
    reduce_scatter)
      reduction_cases "$name-unaligned" "$name" "-u 1" ;;
    all_gather|alltoall)
      cases+=("$name-unaligned|$name|-d all -u 1") ;;
  esac
done
if [[ ${#cases[@]} -eq 0 ]]; then
  echo "error: no *_perf binaries selected in '$tests_dir'" >&2
  exit 1
fi

passed=0
failed=0
for c in "${cases[@]}"; do
  IFS='|' read -r label name extra <<<"$c"
  log="$out_dir/$label.log"
  read -r -a extra_args <<<"$extra"
  start=$SECONDS
  # LD_PRELOAD makes the binaries' DT_NEEDED libnccl.so.2 resolve to Purlin (same SONAME).
  # NVLS (multicast) is out of Purlin's scope, so it is off for the forwarded real NCCL too.
  # env, not a prefix assignment, so that only the test binary (not timeout) preloads it.
  timeout -k 10 "$timeout_s" \
    env "${preload[@]}" NCCL_NVLS_ENABLE=0 PURLIN_DEBUG=INFO \
    "$tests_dir/$name" "${common_args[@]}" "${extra_args[@]}" >"$log" 2>&1
  rc=$?
  secs=$((SECONDS - start))

  # Data lines start with the size and count columns. With the default columns (no -C/-S,
  # no -I) field 9 is the out-of-place #wrong and field 13 the in-place one; "N/A" means
  # the binary does not check that variant (in-place alltoall, sendrecv).
  read -r lines wrong < <(awk '
    /^[[:space:]]*[0-9]+[[:space:]]+[0-9]+[[:space:]]/ {
      n++
      if (NF >= 9  && $9  ~ /^[0-9]+$/) w += $9
      if (NF >= 13 && $13 ~ /^[0-9]+$/) w += $13
    }
    /^rank=[0-9]+ #wrong=/ { split($2, a, "="); w += a[2] }
    END { printf "%d %d\n", n, w }' "$log")
  oob=$(sed -n 's/^# *Out of bounds values *: *\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)

  # The shim logs one INFO line per communicator naming its route (native or forwarded),
  # e.g. "host:pid:tid [0] NCCL INFO Purlin: comm ... route=native ...". Its absence means Purlin was
  # not preloaded or did not see the communicator, so the run tested the real NCCL only.
  if [[ -z $purlin_lib ]]; then route=n/a
  elif grep 'NCCL INFO Purlin: ' "$log" | grep -q 'route='; then route=yes
  else route=no; fi

  why=()
  [[ $rc -eq 0 ]] || why+=("exit $rc$([[ $rc -eq 124 || $rc -eq 137 ]] && echo ' (timeout)')")
  [[ $lines -gt 0 ]] || why+=("no result lines")
  [[ $wrong -eq 0 ]] || why+=("$wrong wrong values")
  if [[ -z $oob ]]; then why+=("no 'Out of bounds values' footer")
  elif [[ $oob -ne 0 ]]; then why+=("$oob out-of-bounds results"); fi
  [[ $route != no ]] || why+=("no 'NCCL INFO Purlin: ... route=' line")

  summary="$(printf '%-32s lines=%-4d wrong=%-3d oob=%-3s rc=%-3d route=%-3s %3ds  %s' \
    "$label" "$lines" "$wrong" "${oob:--}" "$rc" "$route" "$secs" "$log")"
  if [[ ${#why[@]} -eq 0 ]]; then
    echo "PASS $summary"
    passed=$((passed + 1))
  else
    echo "FAIL $summary"
    reasons=$(printf '%s; ' "${why[@]}")
    echo "     reason: ${reasons%; }"
    failed=$((failed + 1))
  fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
