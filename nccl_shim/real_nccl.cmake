# The real-NCCL loader as its own static library, so that unit tests can link it without
# the exported entry points. The `nccl` target links it (PRIVATE); nothing of it is
# exported (exports.map keeps only the NCCL names).
add_library(purlin_real_nccl STATIC
  ${CMAKE_CURRENT_LIST_DIR}/real_nccl.cc
  ${CMAKE_CURRENT_LIST_DIR}/purlin_elf_note.cc)
target_include_directories(purlin_real_nccl PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(purlin_real_nccl PUBLIC purlin_base CUDA::cudart_static ${CMAKE_DL_LIBS})
purlin_use_nccl_headers(purlin_real_nccl PUBLIC)
purlin_target_warnings(purlin_real_nccl)
