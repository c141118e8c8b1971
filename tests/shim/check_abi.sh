#!/bin/sh
# Purlin's libnccl.so.2 must export exactly what the reference (NCCL 2.28.9) exports, with
# the same binding (ncclX weak "W", pncclX "T"), plus Purlin's own entry points: the
# purlinX functions declared in include/purlin/purlin.h, strong ("T"), and nothing else.
# It must carry the SONAME libnccl.so.2.
# Usage: check_abi.sh NM READELF BUILT REFERENCE PURLIN_H. Exit 77 (SKIPPED) without a
# reference, after checking what can be checked without one (Purlin's names, SONAME).
set -u
nm=$1 readelf=$2 built=$3 reference=$4 header=$5

# "<binding> <name>" per defined dynamic symbol; addresses differ and are dropped.
symbols() { "$nm" -D --defined-only "$1" | awk '{ print $2, $3 }' | LC_ALL=C sort; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0

# Purlin's own names: every function the public header declares.
grep -o '\bpurlin[A-Za-z0-9_]*[[:space:]]*(' "$header" | sed 's/[[:space:]]*($//' | LC_ALL=C sort -u \
  | sed 's/^/T /' > "$tmp/purlin"
if [ ! -s "$tmp/purlin" ]; then
  echo "FAIL: no purlinX function declared in $header"
  status=1
fi
symbols "$built" > "$tmp/built"
grep ' purlin' "$tmp/built" > "$tmp/built_purlin"
if ! diff -u "$tmp/purlin" "$tmp/built_purlin" > "$tmp/diff_purlin"; then
  echo "FAIL: Purlin's own exports of $built differ from $header ('-' header only, '+' library only):"
  cat "$tmp/diff_purlin"
  status=1
fi
soname=$("$readelf" -d "$built" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "libnccl.so.2" ]; then
  echo "FAIL: SONAME of $built is '$soname', not 'libnccl.so.2'"
  status=1
fi

if [ -z "$reference" ] || [ ! -r "$reference" ]; then
  [ $status -ne 0 ] && exit $status
  echo "SKIPPED: no reference libnccl.so.2 (configure found none in the CUDA toolkit;" \
       "configure with -DPURLIN_REFERENCE_NCCL=/path/to/nccl-2.28.9/libnccl.so.2)"
  exit 77
fi

symbols "$reference" > "$tmp/reference"
if [ "$(wc -l < "$tmp/reference")" -lt 105 ]; then
  echo "FAIL: the reference $reference exports only $(wc -l < "$tmp/reference") symbols; is it NCCL 2.28.9?"
  status=1
fi
if grep -q ' purlin' "$tmp/reference"; then
  echo "FAIL: the reference $reference exports purlinX names; is it Purlin's own library?"
  status=1
fi
# Expected: the reference's symbols and Purlin's, nothing more, nothing less.
LC_ALL=C sort "$tmp/reference" "$tmp/purlin" > "$tmp/expected"
if ! diff -u "$tmp/expected" "$tmp/built" > "$tmp/diff"; then
  echo "FAIL: dynamic symbols of $built differ from $reference plus $header" \
       "('-' expected only, '+' Purlin only):"
  cat "$tmp/diff"
  status=1
fi
[ $status -eq 0 ] && echo "PASS: $(wc -l < "$tmp/reference") NCCL symbols equal to the reference $reference," \
                          "$(wc -l < "$tmp/purlin") purlinX symbols equal to $header, SONAME libnccl.so.2"
exit $status
