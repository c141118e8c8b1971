# Finds the NCCL headers (nccl.h and nccl_device/) that define the ABI Purlin exports.
# The exported symbol list is NCCL 2.32.3's (nccl_shim/nccl-2.32.3.symbols) and the shim
# reads 2.32's structures, so the first candidate directory whose nccl.h is at least
# version 23203 wins. Candidates, in order: PURLIN_NCCL_INCLUDE_DIR, the cache that
# cmake/install-deps.sh fills from the nvidia-nccl-cu13==2.32.3 wheel
# ($PURLIN_DEPS_CACHE/nccl-2.32.3/include, default ~/.cache/purlin), the CUDA toolkit, the
# Python nvidia-nccl wheel (where PyTorch installs ship it), then the system. Machines
# often carry an older NCCL in the toolkit or the system next to a newer one.
if(DEFINED ENV{PURLIN_DEPS_CACHE} AND NOT "$ENV{PURLIN_DEPS_CACHE}" STREQUAL "")
  set(_cache "$ENV{PURLIN_DEPS_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_cache "$ENV{XDG_CACHE_HOME}/purlin")
else()
  set(_cache "$ENV{HOME}/.cache/purlin")
endif()
set(_cands ${PURLIN_NCCL_INCLUDE_DIR} ${_cache}/nccl-2.32.3/include ${CUDAToolkit_INCLUDE_DIRS})
file(GLOB _wheel_dirs
     $ENV{VIRTUAL_ENV}/lib/python3*/site-packages/nvidia/nccl/include
     /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/include
     /usr/local/lib/python3*/dist-packages/nvidia/nccl/include
     /usr/lib/python3/dist-packages/nvidia/nccl/include)
list(APPEND _cands ${_wheel_dirs} /usr/include /usr/local/include)

set(NcclHeaders_INCLUDE_DIR "")
set(_seen "")
foreach(_dir IN LISTS _cands)
  if(NOT EXISTS "${_dir}/nccl.h")
    continue()
  endif()
  file(STRINGS "${_dir}/nccl.h" _code REGEX "define NCCL_VERSION_CODE ")
  string(REGEX MATCH "[0-9]+" _v "${_code}")
  list(APPEND _seen "${_dir} (${_v})")
  if(_v GREATER_EQUAL 23203)
    set(NcclHeaders_INCLUDE_DIR "${_dir}")
    set(NcclHeaders_VERSION_CODE "${_v}")
    break()
  endif()
endforeach()

if(NOT NcclHeaders_INCLUDE_DIR)
  message(FATAL_ERROR "No NCCL 2.32.3+ headers found (candidates seen: ${_seen}). "
                      "cmake/install-deps.sh fetches them (pip wheel nvidia-nccl-cu13==2.32.3), "
                      "or set PURLIN_NCCL_INCLUDE_DIR.")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NcclHeaders REQUIRED_VARS NcclHeaders_INCLUDE_DIR NcclHeaders_VERSION_CODE)
if(NOT TARGET Nccl::headers)
  add_library(Nccl::headers INTERFACE IMPORTED)
  # nccl.h includes cuda_runtime.h, so users of the headers need the toolkit's too.
  set_target_properties(Nccl::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NcclHeaders_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES CUDA::toolkit)
endif()

# Links `target` to the NCCL headers (scope PUBLIC, PRIVATE or INTERFACE) and puts their
# directory first among its system include directories. The CUDA toolkit's include
# directory, which other targets bring along, may hold an older nccl.h, and system
# directories are searched in command-line order. nccl_shim/nccl_api.h checks at
# compile time which nccl.h the shim and the fake NCCL got.
function(purlin_use_nccl_headers target scope)
  target_include_directories(${target} SYSTEM BEFORE ${scope} ${NcclHeaders_INCLUDE_DIR})
  target_link_libraries(${target} ${scope} Nccl::headers)
endfunction()
