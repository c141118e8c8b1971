#!/usr/bin/env bash
# The test command: installs missing build dependencies, builds Purlin with its tests,
# and runs every test through CTest. Tests that need a GPU report SKIPPED without one.
#
#   PURLIN_BUILD_DIR   build directory (default: <repo>/build)
#   PURLIN_CMAKE_ARGS  extra CMake arguments, e.g. -DPURLIN_CUDA_ARCHITECTURES=90-real
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PURLIN_BUILD_DIR:-$root/build}
jobs=$(nproc)

bash "$root/cmake/install-deps.sh"
# shellcheck disable=SC2086  # PURLIN_CMAKE_ARGS is a list of arguments
cmake -S "$root" -B "$build" -G Ninja ${PURLIN_CMAKE_ARGS:-}
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600
