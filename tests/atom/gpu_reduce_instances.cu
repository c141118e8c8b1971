// The reduce test kernels of one element type: this file is compiled once per entry of
// ElementTypes (PURLIN_ATOM_TEST_TYPE = its index), spreading the type x op x variant kernels over
// translation units that build in parallel.
#include "gpu_kernels.cuh"

namespace purlin::atom::test {

using TestElement = TypeAtT<PURLIN_ATOM_TEST_TYPE, ElementTypes>;
template cudaError_t launch_reduce<TestElement>(int, int, void*, const void* const*, int,
                                                std::size_t, OpArg<TestElement>, int, cudaStream_t);

}  // namespace purlin::atom::test
