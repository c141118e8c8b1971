#!/usr/bin/env bash
# Installs a build into a temporary prefix and uses it as a consumer would: checks the
# layout (the library, its links and SONAME, the headers, the pkg-config and CMake files,
# nothing else), then builds and runs a find_package(Purlin) consumer and a
# `pkg-config nccl` consumer, each calling ncclGetVersion, and checks that the Atom's
# installed headers include nothing the package lacks.
#
#   check_package.sh BUILD_DIR LIBDIR INCLUDEDIR NCCL_ABI_VERSION NCCL_VERSION_CODE
#                    CMAKE GENERATOR MAKE CC CXX CUDA_ROOT
#
# LIBDIR and INCLUDEDIR are CMAKE_INSTALL_LIBDIR/INCLUDEDIR (relative to the prefix),
# NCCL_ABI_VERSION names the library (libnccl.so.<it>), NCCL_VERSION_CODE is that of the
# nccl.h the build used (2.32.3 or newer), which the package ships.
set -euo pipefail
build=$1 libdir=$2 includedir=$3 abi=$4 code=$5 cmake=$6 generator=$7 make=$8 cc=$9 cxx=${10}
cuda_root=${11}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/purlin-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install $build"; }

lib=$prefix/$libdir
inc=$prefix/$includedir

# --- Layout -------------------------------------------------------------------------
if [ ! -f "$lib/libnccl.so.$abi" ] || [ -L "$lib/libnccl.so.$abi" ]; then
  fail "$libdir/libnccl.so.$abi is not a file"
fi
[ "$(readlink "$lib/libnccl.so.2")" = "libnccl.so.$abi" ] || fail "$libdir/libnccl.so.2 is not a link to libnccl.so.$abi"
[ "$(readlink "$lib/libnccl.so")" = "libnccl.so.2" ] || fail "$libdir/libnccl.so is not a link to libnccl.so.2"
dynamic=$(readelf -d "$lib/libnccl.so.$abi")
soname=$(sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' <<< "$dynamic")
[ "$soname" = libnccl.so.2 ] || fail "SONAME is '$soname', not libnccl.so.2"
if grep -E '\((RPATH|RUNPATH)\)' <<< "$dynamic" | grep -qF "$build"; then
  fail "the installed library still searches the build tree: $(grep -E 'R(UN)?PATH' <<< "$dynamic")"
fi

# Everything outside the headers is one of these (tests, benchmarks and static layer
# libraries are not installed); the export file per configuration is named after it.
expected=$(sort <<EOT
$libdir/cmake/Purlin/PurlinConfig.cmake
$libdir/cmake/Purlin/PurlinConfigVersion.cmake
$libdir/cmake/Purlin/PurlinTargets-CONFIG.cmake
$libdir/cmake/Purlin/PurlinTargets.cmake
$libdir/libnccl.so
$libdir/libnccl.so.2
$libdir/libnccl.so.$abi
$libdir/pkgconfig/nccl.pc
$libdir/pkgconfig/purlin.pc
EOT
)
installed=$(cd "$prefix" && find . ! -type d ! -path "./$includedir/*" | sed 's|^\./||' |
            sed 's|PurlinTargets-[a-z]*\.cmake$|PurlinTargets-CONFIG.cmake|' | sort)
[ "$installed" = "$expected" ] ||
  fail "installed files differ from the package's (< installed, > expected):
$(diff <(echo "$installed") <(echo "$expected") || true)"

# Headers: NCCL's (the very version libnccl implements) and Purlin's, nothing else.
grep -q "define NCCL_VERSION_CODE $code\$" "$inc/nccl.h" || fail "$includedir/nccl.h is not the build's (NCCL $code)"
for h in nccl_device.h purlin/purlin.h purlin/atom.cuh purlin/atom_host.h purlin/atom/atom.cuh; do
  [ -f "$inc/$h" ] || fail "$includedir/$h missing"
done
for entry in "$inc"/*; do
  case ${entry##*/} in
    nccl.h | nccl_device.h | nccl_device_wrapper.h | nccl_device | purlin) ;;
    *) fail "unexpected in $includedir: ${entry##*/}" ;;
  esac
done
stray=$(cd "$inc" && find . -type f ! -name '*.h' ! -name '*.cuh' ! -name '*.hpp')
[ -z "$stray" ] || fail "unexpected in $includedir: $stray"

# --- Consumers ------------------------------------------------------------------------
# Without a real NCCL to forward to, ncclGetVersion answers Purlin's own NCCL version
# (with one, it would report that library's). LD_LIBRARY_PATH must not reach a build tree.
run() { env -u LD_LIBRARY_PATH PURLIN_NCCL_LIBRARY=/nonexistent/libnccl.so.2 PURLIN_DEBUG=NONE "$@"; }
loads_installed() {  # the consumer binds the installed libnccl.so.2, not another
  local seen
  seen=$(run ${2:+LD_LIBRARY_PATH=$2} ldd "$1" | sed -n 's/^[[:space:]]*libnccl\.so\.2 => \([^ ]*\).*/\1/p')
  [ "$seen" = "$lib/libnccl.so.2" ] || fail "$(basename "$1") loads '$seen', not $lib/libnccl.so.2"
}

"$cmake" -S "$here/cmake_consumer" -B "$tmp/cmake_consumer" -G "$generator" \
  -DCMAKE_MAKE_PROGRAM="$make" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCUDAToolkit_ROOT="$cuda_root" -DEXPECTED_NCCL_VERSION_CODE="$code" > "$tmp/cmake_consumer.log" 2>&1 ||
  { cat "$tmp/cmake_consumer.log"; fail "find_package(Purlin) consumer: configure"; }
"$cmake" --build "$tmp/cmake_consumer" > "$tmp/cmake_consumer.log" 2>&1 ||
  { cat "$tmp/cmake_consumer.log"; fail "find_package(Purlin) consumer: build"; }
loads_installed "$tmp/cmake_consumer/consumer"
run "$tmp/cmake_consumer/consumer" || fail "find_package(Purlin) consumer: run"

export PKG_CONFIG_PATH=$lib/pkgconfig
export PKG_CONFIG_LIBDIR=$lib/pkgconfig  # nothing of the system's
[ "$(pkg-config --modversion nccl)" = "$abi" ] || fail "pkg-config nccl: version $(pkg-config --modversion nccl)"
for pc in nccl purlin; do
  # shellcheck disable=SC2046  # pkg-config prints a list of flags
  "$cc" -std=c11 -Wall -Wextra -Werror -DEXPECTED_NCCL_VERSION_CODE="$code" "$here/pkgconfig_consumer.c" \
    $(pkg-config --cflags --libs "$pc") -o "$tmp/pkgconfig_consumer_$pc" ||
    fail "pkg-config $pc consumer: build"
  loads_installed "$tmp/pkgconfig_consumer_$pc" "$lib"
  run LD_LIBRARY_PATH="$lib" "$tmp/pkgconfig_consumer_$pc" || fail "pkg-config $pc consumer: run"
done

# The Atom's installed headers are complete: everything <purlin/atom.cuh> includes resolves
# through purlin.pc (a header left out of purlin_atom's file sets fails here).
printf '#include <purlin/atom.cuh>\n#include <purlin/atom_host.h>\n' > "$tmp/atom_consumer.cu"
# shellcheck disable=SC2046  # pkg-config prints a list of flags
"$cuda_root/bin/nvcc" -std=c++20 -M $(pkg-config --cflags purlin) "$tmp/atom_consumer.cu" \
  > "$tmp/atom_consumer.d" 2>&1 || { cat "$tmp/atom_consumer.d"; fail "<purlin/atom.cuh>: includes do not resolve"; }
echo "PASS: package installed into a temporary prefix ($libdir/libnccl.so.$abi, SONAME $soname);" \
     "find_package(Purlin) and pkg-config nccl/purlin consumers built and ran, Atom headers complete"
