#!/usr/bin/env bash
# Installs what building and testing Purlin needs on a Debian or Ubuntu machine, and only
# what is missing: cmake (>= 3.24), ninja, g++, pkg-config, binutils (nm, readelf),
# hwloc and GoogleTest development files, and NCCL 2.32.3's headers. The CUDA toolkit
# (nvcc) must already be there.
#
#   cmake/install-deps.sh          install what is missing (as root, or through sudo)
#   cmake/install-deps.sh --check  only report; exit 1 if something is missing
#
# A dependency counts as present when its tool or files are found, however they were
# installed (a pip or Kitware cmake, a toolkit under /usr/local/cuda), so a complete
# machine without network access never reaches apt-get. apt-get update runs only when
# something has to be installed.
#
# The NCCL headers define the ABI Purlin exports (cmake/FindNcclHeaders.cmake), so their
# version is exact: 2.32.3 or newer. Without them, the headers of the nvidia-nccl-cu13==2.32.3
# wheel (PyPI, through pip) are unpacked into $PURLIN_DEPS_CACHE/nccl-2.32.3/include
# (default ~/.cache/purlin), where the build looks; no root needed.
set -euo pipefail

check_only=0
case ${1:-} in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

say() { echo "install-deps: $*"; }

version_ge() {  # version_ge A B: A >= B
  [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1) == "$2" ]]
}

have_header() {  # have_header RELATIVE_PATH: in the compiler's default include dirs
  local dir
  for dir in /usr/include /usr/local/include /usr/include/x86_64-linux-gnu \
             /usr/include/aarch64-linux-gnu; do
    [[ -e $dir/$1 ]] && return 0
  done
  return 1
}

# Each check prints what it found and succeeds when the dependency is usable.
check_cmake() {
  command -v cmake >/dev/null || return 1
  local v
  v=$(cmake --version | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p')
  if ! version_ge "$v" 3.24; then
    say "cmake $v at $(command -v cmake) is older than 3.24"
    return 1
  fi
  say "cmake $v ($(command -v cmake))"
}
check_ninja()   { command -v ninja >/dev/null && say "ninja $(ninja --version) ($(command -v ninja))"; }
check_gxx()     { command -v g++ >/dev/null && say "g++ $(g++ -dumpfullversion) ($(command -v g++))"; }
check_pkgconf() { command -v pkg-config >/dev/null && say "pkg-config $(pkg-config --version)"; }
check_binutils() {
  command -v nm >/dev/null && command -v readelf >/dev/null && say "binutils: nm, readelf"
}
check_hwloc() {
  if pkg-config --exists hwloc 2>/dev/null; then
    say "hwloc $(pkg-config --modversion hwloc) (pkg-config)"
  elif have_header hwloc.h; then
    say "hwloc: hwloc.h found"
  else
    return 1
  fi
}
check_gtest() {
  if have_header gtest/gtest.h; then say "googletest: gtest/gtest.h found"; else return 1; fi
}

# name | Debian package | check
deps=(
  "cmake|cmake|check_cmake"
  "ninja|ninja-build|check_ninja"
  "g++|g++|check_gxx"
  "pkg-config|pkg-config|check_pkgconf"
  "binutils|binutils|check_binutils"
  "hwloc|libhwloc-dev|check_hwloc"
  "googletest|libgtest-dev|check_gtest"
)

missing=()
for d in "${deps[@]}"; do
  IFS='|' read -r name pkg check <<<"$d"
  if ! "$check"; then
    say "$name: missing (Debian package $pkg)"
    missing+=("$pkg")
  fi
done

# The CUDA toolkit is not installed from here: its version must match the driver and
# the GPUs, which is a decision for whoever sets up the machine.
nvcc=""
for c in "$(command -v nvcc || true)" "${CUDA_HOME:-}/bin/nvcc" "${CUDA_PATH:-}/bin/nvcc" \
         /usr/local/cuda/bin/nvcc; do
  if [[ -n $c && $c != /bin/nvcc && -x $c ]]; then nvcc=$c; break; fi
done
toolkit_ok=1
if [[ -n $nvcc ]]; then
  say "nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') ($nvcc)"
  [[ $nvcc == "$(command -v nvcc || true)" ]] ||
    say "note: nvcc is not on PATH; CMake finds it through CUDA_HOME or /usr/local/cuda, or pass -DCMAKE_CUDA_COMPILER=$nvcc"
else
  toolkit_ok=0
  echo "install-deps: error: nvcc (the CUDA toolkit) not found on PATH, in \$CUDA_HOME or in /usr/local/cuda." >&2
  echo "install-deps:   Install the CUDA toolkit 12.8 or newer (13.x recommended) from NVIDIA's CUDA" >&2
  echo "install-deps:   downloads page or your distribution's NVIDIA repository (package cuda-toolkit-13-0)," >&2
  echo "install-deps:   then put its bin/ on PATH or set CUDA_HOME." >&2
fi

# NCCL headers: any directory the build would accept, else the cache this script fills.
nccl_version=23203  # NCCL_VERSION_CODE of 2.32.3
nccl_cache=${PURLIN_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/purlin}/nccl-2.32.3
nccl_code() {  # NCCL_VERSION_CODE of DIR/nccl.h, empty without one
  [[ -r $1/nccl.h ]] && sed -n 's/^#define NCCL_VERSION_CODE \([0-9]*\).*/\1/p' "$1/nccl.h"
  return 0
}
check_nccl_headers() {
  local dir code
  for dir in ${PURLIN_NCCL_INCLUDE_DIR:-} "$nccl_cache/include" "${CUDA_HOME:-/usr/local/cuda}/include" \
             /usr/local/cuda/include /usr/include /usr/local/include; do
    code=$(nccl_code "$dir")
    if [[ -n $code && $code -ge $nccl_version ]]; then
      say "NCCL headers $code ($dir)"
      return 0
    fi
  done
  return 1
}
install_nccl_headers() {
  local pip tmp
  if python3 -m pip --version >/dev/null 2>&1; then pip=(python3 -m pip)
  elif command -v pip3 >/dev/null; then pip=(pip3)
  else
    echo "install-deps: error: NCCL 2.32.3 headers missing and no pip to fetch them; install python3-pip," >&2
    echo "install-deps:   or point PURLIN_NCCL_INCLUDE_DIR at NCCL 2.32.3's include directory" >&2
    return 1
  fi
  tmp=$(mktemp -d)
  say "fetching NCCL 2.32.3 headers (wheel nvidia-nccl-cu13==2.32.3) into $nccl_cache/include"
  if ! "${pip[@]}" download --quiet --no-deps --only-binary=:all: --dest "$tmp" nvidia-nccl-cu13==2.32.3; then
    rm -rf "$tmp"
    echo "install-deps: error: pip could not download nvidia-nccl-cu13==2.32.3" >&2
    return 1
  fi
  # Only the headers: the wheel's library is not needed to build Purlin.
  mkdir -p "$nccl_cache"
  python3 - "$tmp" "$nccl_cache" <<'PY'
import pathlib, shutil, sys, zipfile
tmp, cache = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(tmp.glob("nvidia_nccl_cu13-2.32.3-*.whl"))
stage = tmp / "include"
prefix = "nvidia/nccl/include/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = stage / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(z.read(name))
shutil.rmtree(cache / "include", ignore_errors=True)
stage.rename(cache / "include")  # complete or absent, never half there
PY
  local ok=$?
  rm -rf "$tmp"
  [[ $ok -eq 0 ]] && check_nccl_headers >/dev/null
}
nccl_headers_ok=1
if ! check_nccl_headers; then
  say "NCCL 2.32.3 headers: missing (wheel nvidia-nccl-cu13==2.32.3)"
  if [[ $check_only -eq 1 ]]; then
    say "missing: NCCL 2.32.3 headers (run without --check to install)"
    nccl_headers_ok=0
  elif ! install_nccl_headers; then
    nccl_headers_ok=0
  fi
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  if [[ $nccl_headers_ok -eq 1 ]]; then say "nothing (more) to install"; fi
  [[ $toolkit_ok -eq 1 && $nccl_headers_ok -eq 1 ]]
  exit
fi

if [[ $check_only -eq 1 ]]; then
  say "missing: ${missing[*]} (run without --check to install)"
  exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-deps: error: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
  exit 1
fi
command -v apt-get >/dev/null || {
  echo "install-deps: error: no apt-get (not Debian/Ubuntu); install: ${missing[*]}" >&2
  exit 1
}

say "installing: ${missing[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
say "apt-get installed: ${missing[*]}"

# What apt installed must now pass the same checks (an old distribution's cmake may not).
failed=0
for d in "${deps[@]}"; do
  IFS='|' read -r name pkg check <<<"$d"
  if ! "$check" >/dev/null; then
    echo "install-deps: error: $name still unusable after installing $pkg" >&2
    failed=1
  fi
done
if ! check_cmake >/dev/null && command -v cmake >/dev/null; then
  echo "install-deps:   this distribution's cmake is too old; 'pip install cmake' provides a current one" >&2
fi
[[ $failed -eq 0 && $toolkit_ok -eq 1 && $nccl_headers_ok -eq 1 ]]
