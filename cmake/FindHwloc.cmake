# Finds hwloc (libhwloc-dev) and defines the imported target Hwloc::hwloc.
find_path(Hwloc_INCLUDE_DIR NAMES hwloc.h)
find_library(Hwloc_LIBRARY NAMES hwloc)
if(Hwloc_INCLUDE_DIR AND EXISTS "${Hwloc_INCLUDE_DIR}/hwloc/autogen/config.h")
  file(STRINGS "${Hwloc_INCLUDE_DIR}/hwloc/autogen/config.h" _v REGEX "define HWLOC_VERSION \"")
  string(REGEX MATCH "\"([^\"]+)\"" _ "${_v}")
  set(Hwloc_VERSION "${CMAKE_MATCH_1}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Hwloc REQUIRED_VARS Hwloc_LIBRARY Hwloc_INCLUDE_DIR
                                  VERSION_VAR Hwloc_VERSION)
if(Hwloc_FOUND AND NOT TARGET Hwloc::hwloc)
  add_library(Hwloc::hwloc UNKNOWN IMPORTED)
  set_target_properties(Hwloc::hwloc PROPERTIES IMPORTED_LOCATION "${Hwloc_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${Hwloc_INCLUDE_DIR}")
endif()
