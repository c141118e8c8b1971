# The real-NCCL loader as its own static library, so that unit tests can link it without
# the exported entry points. The `nccl` target links it (PRIVATE); nothing of it is
# exported (the version script keeps only the NCCL names). Its table of entry points,
# real_nccl_entries.h, is generated from nccl-2.32.3.symbols (cmake/PurlinNcclAbi.cmake).
set(PURLIN_GENERATED_INCLUDE ${CMAKE_CURRENT_BINARY_DIR}/generated)
purlin_nccl_entry_table(${PURLIN_GENERATED_INCLUDE}/real_nccl_entries.h)
add_library(purlin_real_nccl STATIC
  ${CMAKE_CURRENT_LIST_DIR}/real_nccl.cc
  ${CMAKE_CURRENT_LIST_DIR}/purlin_elf_note.cc)
target_include_directories(purlin_real_nccl PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${PURLIN_GENERATED_INCLUDE})
target_link_libraries(purlin_real_nccl PUBLIC purlin_base CUDA::cudart_static ${CMAKE_DL_LIBS})
purlin_use_nccl_headers(purlin_real_nccl PUBLIC)
purlin_target_warnings(purlin_real_nccl)
