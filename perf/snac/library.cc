#include "library.h"

#include <dlfcn.h>
#include <nccl.h>

namespace purlin::snac_bench {
namespace {

template <class Fn>
Fn lookup(const char* symbol) {
  // RTLD_DEFAULT: the global scope, where the libnccl.so.2 the program was started with lives.
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
}

Library resolve() {
  Library lib;
  if (ncclGetVersion(&lib.version) != ncclSuccess) lib.version = 0;
  Dl_info info{};
  // The address from dlsym, not &ncclAllReduce: in a non-PIE executable the latter can be the
  // program's own PLT entry, which dladdr would attribute to the program.
  if (void* fn = dlsym(RTLD_DEFAULT, "ncclAllReduce"); fn != nullptr && dladdr(fn, &info) != 0 &&
                                                       info.dli_fname != nullptr) {
    lib.path = info.dli_fname;
  }
  lib.comm_is_native = lookup<decltype(lib.comm_is_native)>("purlinCommIsNative");
  lib.all_gather_v = lookup<decltype(lib.all_gather_v)>("purlinAllGatherV");
  lib.reduce_scatter_v = lookup<decltype(lib.reduce_scatter_v)>("purlinReduceScatterV");
  lib.all_to_all_v = lookup<decltype(lib.all_to_all_v)>("purlinAllToAllV");
  return lib;
}

}  // namespace

const Library& library() {
  static const Library lib = resolve();
  return lib;
}

std::string version_string(int code) {
  const bool old = code < 20900;  // NCCL changed the encoding at 2.9
  const int major = old ? code / 1000 : code / 10000;
  const int minor = old ? code / 100 % 10 : code / 100 % 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace purlin::snac_bench
