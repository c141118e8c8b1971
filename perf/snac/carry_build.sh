#!/usr/bin/env bash
# Builds one commit of Purlin on this (CPU) machine for one GPU generation and leaves what a
# device call needs in .device/NAME of this checkout (an ignored folder, carried to the GPU
# machine with the run): Purlin's libnccl.so.2, native_collectives_test and snac_bench. The
# binaries' runpath is the build folder, /tmp/purlin-carry/NAME/build/nccl_shim: on the GPU
# machine link /tmp/purlin-carry/NAME/build to $PWD/.device/NAME (or set LD_LIBRARY_PATH).
#
#   perf/snac/carry_build.sh COMMIT NAME [ARCH]      (ARCH default 90-real; 2 cores: ~15 min)
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 COMMIT NAME [ARCH]" >&2; exit 2; }
commit=$1 name=$2 arch=${3:-90-real}
root=$(git rev-parse --show-toplevel)
src=/tmp/purlin-carry/$name/src build=/tmp/purlin-carry/$name/build
rm -rf "$src"; mkdir -p "$(dirname "$src")"
git -C "$root" archive --prefix=src/ "$commit" | tar -x -C "$(dirname "$src")"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPURLIN_CUDA_ARCHITECTURES="$arch" >/dev/null
ninja -C "$build" nccl native_collectives_test snac_bench
out=$root/.device/$name
rm -rf "$out"; mkdir -p "$out/nccl_shim" "$out/tests/native" "$out/perf/snac"
cp -L "$build/nccl_shim/libnccl.so.2" "$out/nccl_shim/"
cp "$build/tests/native/native_collectives_test" "$out/tests/native/"
cp "$build/perf/snac/snac_bench" "$out/perf/snac/"
git -C "$root" rev-parse "$commit" > "$out/COMMIT"
du -sh "$out"
