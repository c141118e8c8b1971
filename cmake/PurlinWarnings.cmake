# Warnings are errors in every Purlin target. Kernels also report register spills,
# since a spilling Atom loses the bandwidth it exists for.
function(purlin_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Werror -Wno-unused-parameter>
    $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror,-Wno-unused-parameter -Xptxas=-warn-spills>)
endfunction()
