// The host reference, written from the documented semantics (DESIGN.md section 3, purlin.h),
// sharing no code with Purlin: each output element combines the ranks' contributions in
// ascending rank order; 8- and 16-bit floats accumulate in fp32 and round once (fp8 saturating);
// integers wrap; Avg divides the wrapped integer sum by n (truncating) or multiplies the float
// sum by 1/n computed in the accumulation type; PreMulSum multiplies rank k's widened contribution
// by rank k's widened scalar, rounds that product to the element type, and sums.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <functional>

#include "cases.h"

namespace purlin::native_test {

// Runs fn(0) ... fn(tasks - 1) on up to hardware_concurrency() threads (on the caller's alone
// when !parallel: starting threads costs more than small cases take); returns when all finished.
void parallel_tasks(std::size_t tasks, const std::function<void(std::size_t)>& fn, bool parallel = true);

// out[i], i in [0, len): the reduction over ranks 0..nranks-1 of input element src + i, as
// elements of type t (len * type_bytes(t) bytes). Runs on several threads for large len.
void reference_reduce(ncclDataType_t t, Op op, int nranks, std::size_t src, std::size_t len, void* out);

// out[i] = input element src + i of `rank`, as raw bytes.
void reference_input(ncclDataType_t t, int rank, std::size_t src, std::size_t len, void* out);

}  // namespace purlin::native_test
