#!/bin/sh
# Purlin's libnccl.so.2 must export exactly NCCL 2.32.3's dynamic symbols, with the same
# binding (ncclX weak "W", pncclX and ncclResetDebugInitInternal "T"), as the committed list
# nccl_shim/nccl-2.32.3.symbols records them; plus Purlin's own entry points, the purlinX
# functions declared in include/purlin/purlin.h, strong ("T"), and nothing else. It must
# carry the SONAME libnccl.so.2. No reference library is needed: the list is the reference.
# Given one (REFERENCE, optional: a real libnccl.so.2 of NCCL 2.32.3), the list is also held
# to it, which is how the list is checked when NCCL moves.
# Usage: check_abi.sh NM READELF BUILT SYMBOLS PURLIN_H [REFERENCE]
set -u
nm=$1 readelf=$2 built=$3 list=$4 header=$5 reference=${6:-}

# "<binding> <name>" per defined dynamic symbol; addresses differ and are dropped.
symbols() { "$nm" -D --defined-only "$1" | awk '{ print $2, $3 }' | LC_ALL=C sort; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# The list's first two columns; comments and blank lines are not symbols.
awk '!/^#/ && NF { print $1, $2 }' "$list" | LC_ALL=C sort > "$tmp/nccl"
count=$(wc -l < "$tmp/nccl")
if [ "$count" -ne 193 ]; then
  echo "FAIL: $list lists $count symbols; NCCL 2.32.3 exports 193"
  status=1
fi
if grep -q ' purlin' "$tmp/nccl"; then
  echo "FAIL: $list lists purlinX names; they belong to $header"
  status=1
fi

# Purlin's own names: every function the public header declares.
grep -o '\bpurlin[A-Za-z0-9_]*[[:space:]]*(' "$header" | sed 's/[[:space:]]*($//' | LC_ALL=C sort -u \
  | sed 's/^/T /' > "$tmp/purlin"
if [ ! -s "$tmp/purlin" ]; then
  echo "FAIL: no purlinX function declared in $header"
  status=1
fi

symbols "$built" > "$tmp/built"
LC_ALL=C sort "$tmp/nccl" "$tmp/purlin" > "$tmp/expected"
if ! diff -u "$tmp/expected" "$tmp/built" > "$tmp/diff"; then
  echo "FAIL: dynamic symbols of $built differ from $list plus $header ('-' expected only, '+' Purlin only):"
  cat "$tmp/diff"
  status=1
fi
soname=$("$readelf" -d "$built" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "libnccl.so.2" ]; then
  echo "FAIL: SONAME of $built is '$soname', not 'libnccl.so.2'"
  status=1
fi

if [ -n "$reference" ]; then
  symbols "$reference" > "$tmp/reference"
  if ! diff -u "$tmp/nccl" "$tmp/reference" > "$tmp/diff_reference"; then
    echo "FAIL: $list differs from the reference $reference ('-' list only, '+' reference only):"
    cat "$tmp/diff_reference"
    status=1
  fi
fi

[ $status -eq 0 ] && echo "PASS: $count NCCL symbols equal to $list${reference:+ and $reference}," \
                          "$(wc -l < "$tmp/purlin") purlinX symbols equal to $header, SONAME libnccl.so.2"
exit $status
