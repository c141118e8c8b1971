# Finds the NCCL 2.28 headers (nccl.h and nccl_device/) that define the ABI Purlin exports.
# Search order: PURLIN_NCCL_INCLUDE_DIR, the CUDA toolkit, then the system. The version
# must be at least 2.28.9 because the exported symbol list is that release's.
find_path(NcclHeaders_INCLUDE_DIR NAMES nccl.h
          HINTS ${PURLIN_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS}
          PATHS /usr/include /usr/local/include)
if(NcclHeaders_INCLUDE_DIR)
  file(STRINGS "${NcclHeaders_INCLUDE_DIR}/nccl.h" _code REGEX "define NCCL_VERSION_CODE ")
  string(REGEX MATCH "[0-9]+" NcclHeaders_VERSION_CODE "${_code}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NcclHeaders REQUIRED_VARS NcclHeaders_INCLUDE_DIR NcclHeaders_VERSION_CODE)
if(NcclHeaders_FOUND)
  if(NcclHeaders_VERSION_CODE LESS 22809)
    message(FATAL_ERROR "nccl.h in ${NcclHeaders_INCLUDE_DIR} is version ${NcclHeaders_VERSION_CODE}; "
                        "Purlin needs 2.28.9 (22809) or newer. Set PURLIN_NCCL_INCLUDE_DIR.")
  endif()
  if(NOT TARGET Nccl::headers)
    add_library(Nccl::headers INTERFACE IMPORTED)
    set_target_properties(Nccl::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NcclHeaders_INCLUDE_DIR}")
  endif()
endif()
