#!/usr/bin/env bash
# Runs tests/integration/torch_collectives.py through Purlin (LD_PRELOAD) and checks
# that Purlin, not only the real NCCL, served it. Usage:
#
#   tests/integration/run_torch.sh PURLIN_LIB OUTDIR [-- ARGS FOR torch_collectives.py]
#
# PURLIN_LIB  Purlin's libnccl.so.2; the word "none" runs PyTorch's own NCCL as a baseline
#             (no preload, no routing check), to tell a Purlin bug from a test bug.
# OUTDIR      torch.log (stdout: one line per check) and torch.err (stderr: Purlin's log)
# Optional environment:
#   PYTHON=...         interpreter (default /opt/torch/.venv/bin/python3, else python3)
#   TORCH_NPROC=N      world of N processes through torchrun (default 1: no torchrun)
#   TORCH_TIMEOUT=300  seconds before the run is killed
set -u -o pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 PURLIN_LIB|none OUTDIR [-- ARGS]" >&2
  exit 2
fi
here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
if [[ $1 == none ]]; then
  purlin_lib=""
else
  purlin_lib=$(realpath -e -- "$1" 2>/dev/null) || { echo "error: PURLIN_LIB '$1' does not exist" >&2; exit 2; }
fi
out_dir=$2
shift 2
[[ ${1:-} == -- ]] && shift
mkdir -p -- "$out_dir" || exit 2

python=${PYTHON:-}
if [[ -z $python ]]; then
  if [[ -x /opt/torch/.venv/bin/python3 ]]; then python=/opt/torch/.venv/bin/python3; else python=python3; fi
fi
nproc=${TORCH_NPROC:-1}
timeout_s=${TORCH_TIMEOUT:-300}

launcher=("$python")
if [[ $nproc -gt 1 ]]; then
  # torchrun's module form: present wherever torch is, whatever PATH holds.
  launcher=("$python" -m torch.distributed.run --standalone --nproc-per-node "$nproc")
fi

preload=()
[[ -n $purlin_lib ]] && preload=(LD_PRELOAD="$purlin_lib")
echo "python: $python; world: $nproc; preload: ${purlin_lib:-none}"
# env, not a prefix assignment, so that only Python (not timeout) preloads Purlin.
timeout -k 10 "$timeout_s" env "${preload[@]}" NCCL_NVLS_ENABLE=0 PURLIN_DEBUG=INFO \
  "${launcher[@]}" "$here/torch_collectives.py" "$@" >"$out_dir/torch.log" 2>"$out_dir/torch.err"
rc=$?

grep -E '^\[rank [0-9]+\] FAIL ' "$out_dir/torch.log" | head -n 50
totals=$(grep -E '^\[rank [0-9]+\] [0-9]+ passed, [0-9]+ failed$' "$out_dir/torch.log")
echo "${totals:-no summary line from torch_collectives.py}"

failed=0
if [[ $rc -ne 0 ]]; then
  case $rc in
    77) echo "FAIL: torch_collectives.py was SKIPPED (no CUDA device visible to PyTorch)" ;;
    124|137) echo "FAIL: timed out after ${timeout_s}s" ;;
    *) echo "FAIL: exit status $rc (stderr: $out_dir/torch.err)" ;;
  esac
  failed=1
fi
if [[ -z $totals ]]; then failed=1; fi
# The shim logs one INFO line per communicator naming its route (native or forwarded):
# "host:pid:tid [cudaDev] NCCL INFO Purlin: comm ... route=...". Without it Purlin was not
# preloaded or never saw PyTorch's communicator, and the run tested the real NCCL only.
if [[ -n $purlin_lib ]]; then
  if grep 'NCCL INFO Purlin: ' "$out_dir/torch.err" | grep -q 'route='; then
    echo "Purlin routing line: $(grep 'NCCL INFO Purlin: ' "$out_dir/torch.err" | grep -m 1 'route=')"
  else
    echo "FAIL: no 'NCCL INFO Purlin: ... route=' line in $out_dir/torch.err"
    failed=1
  fi
fi

# Per-check counts summed over ranks, in the plain closing form.
read -r npass nfail < <(echo "$totals" | awk '{p += $3; f += $5} END {printf "%d %d\n", p, f}')
if [[ $failed -ne 0 && $nfail -eq 0 ]]; then nfail=1; fi  # the run itself failed
echo "$npass passed, $nfail failed"
[[ $failed -eq 0 && $nfail -eq 0 ]]
