#!/usr/bin/env bash
# stage.sh BUILD DEST: slim copy of a build for the device (gpu tests, perf binaries, the shim)
set -euo pipefail
b=$1; d=$(realpath -m "$2")
rm -rf "$d"; mkdir -p "$d"
cd "$b"
find . \( -name CTestTestfile.cmake -o -name "*_include.cmake" -o -name "*_tests.cmake" \) ! -path "*/CMakeFiles/*" -exec cp --parents {} "$d" \;
cp -a --parents nccl_shim/libnccl.so* "$d"
for f in tests/native/native_collectives_test tests/atom/atom_gpu_test tests/runtime/runtime_device_state_gpu_test tests/runtime/runtime_device_state_ipc_gpu_test perf/snac/snac_bench perf/snac/mps_bench perf/snac/packet_latency perf/snac/launch_floor perf/atom/atom_bench; do
  cp -a --parents "$f" "$d"
done
du -sh "$d"
