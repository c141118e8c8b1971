// Built against the installed package with find_package(Purlin): the NCCL headers,
// <purlin/purlin.h> and the host Atom must all come from it, and libnccl must answer.
#include <nccl.h>
#include <purlin/atom_host.h>
#include <purlin/purlin.h>

#include <cstdio>
#include <cstring>

static_assert(NCCL_VERSION_CODE == EXPECTED_NCCL_VERSION_CODE,
              "nccl.h is not the package's (an older one earlier on the include path?)");

int main() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess || version != EXPECTED_NCCL_VERSION_CODE) {
    std::printf("FAIL: ncclGetVersion gave %d, expected %d\n", version, EXPECTED_NCCL_VERSION_CODE);
    return 1;
  }
  // Purlin's own entry point links and checks its arguments (no communicator: an error).
  int native = -1;
  if (purlinCommIsNative(nullptr, &native) == ncclSuccess) {
    std::printf("FAIL: purlinCommIsNative accepted a null communicator\n");
    return 1;
  }
  // The installed Atom headers are complete: the host Atom copies.
  char src[64], dst[64] = {};
  for (int i = 0; i < 64; ++i) src[i] = static_cast<char>(i + 1);
  purlin::atom::HostAtom<>::copy(dst, src, sizeof(src), nullptr);
  if (std::memcmp(dst, src, sizeof(src)) != 0) {
    std::printf("FAIL: HostAtom::copy\n");
    return 1;
  }
  std::printf("find_package consumer: ncclGetVersion %d, Purlin's NCCL %s\n", version, PURLIN_NCCL_VERSION);
  return 0;
}
