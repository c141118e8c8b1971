#!/bin/sh
# Every NCCL function that today's frameworks call, as nccl_shim/nccl-consumers.tsv records
# them (torch's libtorch_cuda.so, the pynccl wrappers of vLLM and SGLang), must be in NCCL
# 2.32.3's list and exported by the built libnccl.so.2. A name missing breaks the framework
# that loads Purlin in NCCL's place: torch's dynamic linker cannot resolve it, a pynccl wrapper
# raises while binding. Optional names are held to it too: their absence silently turns a
# feature off (SGLang's symmetric memory, say). shim_abi_test already holds the library to the
# list; this test names the consumer that a change to either would break.
# Usage: check_consumers.sh NM BUILT SYMBOLS CONSUMERS
set -u
nm=$1 built=$2 list=$3 table=$4

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The list's names (second column); comments and blank lines are not symbols.
awk '!/^#/ && NF { print $2 }' "$list" > "$tmp/list" || exit 1
if ! "$nm" -D --defined-only "$built" > "$tmp/nm"; then
  echo "FAIL: cannot read the dynamic symbols of $built"
  exit 1
fi
awk '{ print $3 }' "$tmp/nm" > "$tmp/built"

# The table: comments, then the column names, then one row per consumer and symbol.
awk -F '\t' -v list="$tmp/list" -v listname="$list" -v built="$tmp/built" -v builtname="$built" '
  BEGIN {
    while ((getline name < list) > 0) listed[name] = 1
    while ((getline name < built) > 0) exported[name] = 1
  }
  /^#/ || !NF { next }
  !seen_header {
    seen_header = 1
    if ($0 != "consumer\tsymbol\tneed") {
      printf "FAIL: %s:%d: column names are not consumer<TAB>symbol<TAB>need\n", FILENAME, FNR
      bad = 1
    }
    next
  }
  NF != 3 || $1 == "" || $3 == "" || $2 !~ /^p?nccl[A-Za-z0-9_]+$/ {
    printf "FAIL: %s:%d: not consumer<TAB>symbol<TAB>need: %s\n", FILENAME, FNR, $0
    bad = 1
    next
  }
  {
    rows++
    if (!($1 in consumers)) { consumers[$1] = 1; nconsumers++ }
    if (!($2 in symbols)) { symbols[$2] = 1; nsymbols++ }
  }
  !($2 in listed) {
    printf "FAIL: %s (%s, %s) is not in %s\n", $2, $1, $3, listname
    bad = 1
  }
  !($2 in exported) {
    printf "FAIL: %s (%s, %s) is not exported by %s\n", $2, $1, $3, builtname
    bad = 1
  }
  END {
    if (rows == 0) {
      printf "FAIL: %s lists no symbols\n", FILENAME
      bad = 1
    }
    if (!bad)
      printf "PASS: %d names (%d rows, %d consumers) of %s in %s and exported by %s\n",
             nsymbols, rows, nconsumers, FILENAME, listname, builtname
    exit bad
  }
' "$table"
