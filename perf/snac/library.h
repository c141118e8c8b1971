// The NCCL library this process runs on, resolved at run time. snac_bench is linked against
// Purlin's libnccl.so.2 but also measures a reference NCCL preloaded in its place
// (LD_PRELOAD=/path/libnccl.so.2: the preloaded object carries the same SONAME and satisfies the
// binary's DT_NEEDED, so Purlin's library is not loaded at all). A direct reference to one of
// Purlin's own entry points would then stop the program from starting, so they are looked up
// with dlsym and are null when the loaded library lacks them.
#pragma once

#include <purlin/purlin.h>

#include <string>

namespace purlin::snac_bench {

struct Library {
  int version = 0;    // ncclGetVersion's code (0 when it failed)
  std::string path;   // the file that defines ncclAllReduce
  // decltype keeps the declarations of purlin.h as the one source of the signatures without
  // referencing the symbols.
  decltype(&purlinCommIsNative) comm_is_native = nullptr;
  decltype(&purlinAllGatherV) all_gather_v = nullptr;
  decltype(&purlinReduceScatterV) reduce_scatter_v = nullptr;
  decltype(&purlinAllToAllV) all_to_all_v = nullptr;
};

// Resolved on first use; the library cannot change while the process runs.
const Library& library();

// "2.32.3" for NCCL's version code 23203 (codes before 2.9 are major * 1000 + minor * 100 + patch).
std::string version_string(int code);

}  // namespace purlin::snac_bench
