/* Built against the installed package with `pkg-config --cflags --libs nccl`, as C. */
#include <nccl.h>
#include <stdio.h>

#if NCCL_VERSION_CODE != EXPECTED_NCCL_VERSION_CODE
#error "nccl.h is not the package's (an older one earlier on the include path?)"
#endif

int main(void) {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess || version != EXPECTED_NCCL_VERSION_CODE) {
    printf("FAIL: ncclGetVersion gave %d, expected %d\n", version, EXPECTED_NCCL_VERSION_CODE);
    return 1;
  }
  printf("pkg-config consumer: ncclGetVersion %d\n", version);
  return 0;
}
