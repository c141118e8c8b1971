# Finds the NCCL headers (nccl.h and nccl_device/) that define the ABI Purlin exports.
# The exported symbol list is NCCL 2.28.9's, so the first candidate directory whose
# nccl.h is at least version 22809 wins. Candidates, in order: PURLIN_NCCL_INCLUDE_DIR,
# the CUDA toolkit, the Python nvidia-nccl wheel (where PyTorch installs ship it), then
# the system. Machines often carry an older system NCCL next to a newer wheel.
set(_cands ${PURLIN_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
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
  if(_v GREATER_EQUAL 22809)
    set(NcclHeaders_INCLUDE_DIR "${_dir}")
    set(NcclHeaders_VERSION_CODE "${_v}")
    break()
  endif()
endforeach()

if(NOT NcclHeaders_INCLUDE_DIR)
  message(FATAL_ERROR "No NCCL 2.28.9+ headers found (candidates seen: ${_seen}). "
                      "Install the CUDA toolkit's NCCL or the nvidia-nccl wheel, or set PURLIN_NCCL_INCLUDE_DIR.")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NcclHeaders REQUIRED_VARS NcclHeaders_INCLUDE_DIR NcclHeaders_VERSION_CODE)
if(NOT TARGET Nccl::headers)
  add_library(Nccl::headers INTERFACE IMPORTED)
  # Ahead of the CUDA include directory, which may hold another nccl.h.
  # nccl.h includes cuda_runtime.h, so users of the headers need the toolkit's too.
  set_target_properties(Nccl::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NcclHeaders_INCLUDE_DIR}"
                        INTERFACE_LINK_LIBRARIES CUDA::toolkit)
endif()
