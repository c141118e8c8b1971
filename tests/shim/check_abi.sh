#!/bin/sh
# Purlin's libnccl.so.2 must export exactly what the reference (NCCL 2.28.9) exports, with
# the same binding (ncclX weak "W", pncclX "T"), and carry the SONAME libnccl.so.2.
# Usage: check_abi.sh NM READELF BUILT REFERENCE. Exit 77 (SKIPPED) without a reference.
set -u
nm=$1 readelf=$2 built=$3 reference=$4

if [ -z "$reference" ] || [ ! -r "$reference" ]; then
  echo "SKIPPED: no reference libnccl.so.2 (configure found none in the CUDA toolkit;" \
       "configure with -DPURLIN_REFERENCE_NCCL=/path/to/nccl-2.28.9/libnccl.so.2)"
  exit 77
fi

# "<binding> <name>" per defined dynamic symbol; addresses differ and are dropped.
symbols() { "$nm" -D --defined-only "$1" | awk '{ print $2, $3 }' | LC_ALL=C sort; }

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
symbols "$reference" > "$tmp/reference"
symbols "$built" > "$tmp/built"

status=0
if [ "$(wc -l < "$tmp/reference")" -lt 105 ]; then
  echo "FAIL: the reference $reference exports only $(wc -l < "$tmp/reference") symbols; is it NCCL 2.28.9?"
  status=1
fi
if ! diff -u "$tmp/reference" "$tmp/built" > "$tmp/diff"; then
  echo "FAIL: dynamic symbols of $built differ from $reference ('-' reference only, '+' Purlin only):"
  cat "$tmp/diff"
  status=1
fi
soname=$("$readelf" -d "$built" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "libnccl.so.2" ]; then
  echo "FAIL: SONAME of $built is '$soname', not 'libnccl.so.2'"
  status=1
fi
[ $status -eq 0 ] && echo "PASS: $(wc -l < "$tmp/built") symbols and SONAME equal the reference $reference"
exit $status
