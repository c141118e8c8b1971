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

# Device code compression, for every CUDA target of the tree (included before any target).
# nvcc compresses only PTX by default and stores machine code (SASS) as it is, and the
# launch bridge's ~300 kernel instances are most of libnccl's size. nvcc 13 (CUDA 12.8+):
#   size     --compress-mode=size: SASS and PTX (the default)
#   balance  -Xfatbin=-compress-all: fatbinary's default mode, on SASS too
#   speed    -Xfatbin=-compress-all --compress-mode=speed
#   off      nvcc's default (PTX only)
# Measured with nvcc 13.0 on copy_instances.cu (7 kernels, sm_90, 1.66 MB of SASS): size
# 0.18 MB, balance 0.23 MB, speed 0.48 MB. --compress-mode=balance or =speed alone leaves
# SASS uncompressed. The driver decompresses a module's image when it loads it.
set(PURLIN_CUDA_COMPRESSION "size" CACHE STRING
    "Compression of the device code: size, balance, speed or off")
set_property(CACHE PURLIN_CUDA_COMPRESSION PROPERTY STRINGS size balance speed off)
set(_purlin_compression_size --compress-mode=size)
set(_purlin_compression_balance -Xfatbin=-compress-all)
set(_purlin_compression_speed -Xfatbin=-compress-all --compress-mode=speed)
set(_purlin_compression_off "")
if(NOT DEFINED _purlin_compression_${PURLIN_CUDA_COMPRESSION})
  message(FATAL_ERROR "PURLIN_CUDA_COMPRESSION: '${PURLIN_CUDA_COMPRESSION}' is not one of "
                      "size, balance, speed, off")
endif()
foreach(_flag IN LISTS _purlin_compression_${PURLIN_CUDA_COMPRESSION})
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:${_flag}>)
endforeach()
message(STATUS "Purlin device code compression: ${PURLIN_CUDA_COMPRESSION}")
