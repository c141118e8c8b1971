# The GPU architectures Purlin's kernels are compiled for.
# Default: Ampere (sm_80), Hopper (sm_90), Blackwell (sm_100) as machine code, plus
# sm_100 PTX so newer GPUs can JIT. Each entry is validated so that a typo fails at
# configure time instead of producing a library that silently lacks a GPU's code.
set(PURLIN_CUDA_ARCHITECTURES "80-real;90-real;100-real;100-virtual" CACHE STRING
    "CUDA architectures for Purlin kernels (entries: <cc>[a|f][-real|-virtual])")

set(_purlin_known_cc 80 86 87 89 90 90a 100 100a 100f 103 103a 103f 110 120 120a 121)
foreach(_arch IN LISTS PURLIN_CUDA_ARCHITECTURES)
  string(REGEX MATCH "^([0-9]+[af]?)(-real|-virtual)?$" _ok "${_arch}")
  if(NOT _ok)
    message(FATAL_ERROR "PURLIN_CUDA_ARCHITECTURES: malformed entry '${_arch}'")
  endif()
  if(NOT CMAKE_MATCH_1 IN_LIST _purlin_known_cc)
    message(FATAL_ERROR "PURLIN_CUDA_ARCHITECTURES: '${CMAKE_MATCH_1}' is not a supported "
                        "compute capability (sm_80 or newer: ${_purlin_known_cc})")
  endif()
endforeach()
list(LENGTH PURLIN_CUDA_ARCHITECTURES _n)
if(_n EQUAL 0)
  message(FATAL_ERROR "PURLIN_CUDA_ARCHITECTURES is empty")
endif()
set(CMAKE_CUDA_ARCHITECTURES ${PURLIN_CUDA_ARCHITECTURES})
message(STATUS "Purlin CUDA architectures: ${PURLIN_CUDA_ARCHITECTURES}")
