// The copy kernels: one per collective that copies, on a byte element (instances.h).
#include "launch/launcher.cuh"

namespace purlin::launch {

const CopyKernels& copy_kernels() {
  static const CopyKernels table = make_copy_kernels(std::make_index_sequence<kCopyCollectives>{});
  return table;
}

}  // namespace purlin::launch
