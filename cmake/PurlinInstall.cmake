# The installed package (`cmake --install`): what a consumer of Purlin needs and nothing
# else. Tests, benchmarks and the static layer libraries stay in the build tree.
#   lib/libnccl.so.<NCCL ABI version>, libnccl.so.2 (SONAME), libnccl.so
#   include/nccl.h, nccl_device*   the NCCL headers libnccl was built against
#   include/purlin/                purlin.h, the Atom's public headers and their
#                                  implementation (include/purlin/atom/)
#   lib/pkgconfig/nccl.pc, purlin.pc
#   lib/cmake/Purlin/              PurlinConfig.cmake: Purlin::nccl, Purlin::atom
include(CMakePackageConfigHelpers)

set(PURLIN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Purlin)
set(PURLIN_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# `public` sets are rooted at include/ (<purlin/purlin.h>), `detail` at src/: the Atom's
# implementation includes itself as "atom/...", so it lands in include/purlin/atom/ and
# Purlin::atom adds include/purlin to the search path.
install(TARGETS nccl purlin_atom EXPORT PurlinTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  FILE_SET public DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILE_SET detail DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/purlin)
install(EXPORT PurlinTargets NAMESPACE Purlin:: DESTINATION ${PURLIN_INSTALL_CMAKEDIR})

# The ABI's headers: a consumer compiles against the very nccl.h libnccl implements.
# nccl.h is required (FindNcclHeaders); the device API headers ship with NCCL 2.28+.
install(FILES ${NcclHeaders_INCLUDE_DIR}/nccl.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(_header nccl_device.h nccl_device_wrapper.h)
  if(EXISTS ${NcclHeaders_INCLUDE_DIR}/${_header})
    install(FILES ${NcclHeaders_INCLUDE_DIR}/${_header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
if(IS_DIRECTORY ${NcclHeaders_INCLUDE_DIR}/nccl_device)
  install(DIRECTORY ${NcclHeaders_INCLUDE_DIR}/nccl_device DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/package/PurlinConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/PurlinConfig.cmake
  INSTALL_DESTINATION ${PURLIN_INSTALL_CMAKEDIR})
# 0.x: a minor release may change Purlin's own API (the NCCL ABI never changes within one).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/PurlinConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/PurlinConfig.cmake
              ${PROJECT_BINARY_DIR}/package/PurlinConfigVersion.cmake
        DESTINATION ${PURLIN_INSTALL_CMAKEDIR})

# pkg-config files locate the prefix from their own directory (${pcfiledir}), so the
# package stays usable when `cmake --install --prefix` puts it elsewhere than
# CMAKE_INSTALL_PREFIX. nccl.h includes cuda_runtime.h: the toolkit libnccl was built
# with provides it.
function(purlin_pc_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${PURLIN_INSTALL_PKGCONFIGDIR}")
  set(PURLIN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _up /${PURLIN_INSTALL_PKGCONFIGDIR} /)
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(PURLIN_PC_PREFIX "\${pcfiledir}/${_up}")
endif()
purlin_pc_dir(PURLIN_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
purlin_pc_dir(PURLIN_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
list(TRANSFORM CUDAToolkit_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE _cuda_cflags)
list(JOIN _cuda_cflags " " PURLIN_PC_CUDA_CFLAGS)
foreach(_pc nccl purlin)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/package/${_pc}.pc.in
                 ${PROJECT_BINARY_DIR}/package/${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/${_pc}.pc DESTINATION ${PURLIN_INSTALL_PKGCONFIGDIR})
endforeach()
