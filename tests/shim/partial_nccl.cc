// A library with NCCL's name and only one of its entry points: what the loader sees when
// a path holds an unrelated or truncated libnccl. It must be refused, not half-used.
#include <nccl.h>

extern "C" ncclResult_t pncclGetVersion(int* version) {
  *version = 22800;
  return ncclSuccess;
}
