// purlin-info: Purlin's version and the host topology as Purlin sees it (packages, NUMA
// nodes, GPUs and their CPU locality). Works without a GPU; always exits 0 unless the
// report itself cannot be produced.
#include <cstdio>
#include <exception>

#include "runtime/topology/topology.h"

int main() {
  std::printf("Purlin %s\n", PURLIN_VERSION_STRING);
  try {
    std::fputs(purlin::runtime::describe_topology().c_str(), stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "purlin-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
