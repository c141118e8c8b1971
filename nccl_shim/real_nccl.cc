#include "real_nccl.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "purlin_elf_note.h"

namespace purlin::shim {
namespace {

// RTLD_LOCAL keeps the real NCCL's symbols out of the global scope, where they would
// compete with Purlin's exports; RTLD_DEEPBIND makes the real library resolve its own
// internal references to itself rather than to Purlin's same-named exports; RTLD_NODELETE
// because a forwarded communicator may outlive any reference count we could keep.
// Sanitizer runtimes abort on RTLD_DEEPBIND (they must interpose every call), so
// sanitized test builds go without it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
#else
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND | RTLD_NODELETE;
#endif

// The object (executable or shared library) this code was linked into.
struct SelfObject {
  const void* base = nullptr;
  bool have_file = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

SelfObject find_self() {
  SelfObject self;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&search_real_nccl), &info) == 0) return self;
  self.base = info.dli_fbase;
  // For the main program glibc reports argv[0], which need not be a path.
  const char* file = info.dli_fname;
  if (file == nullptr || std::strchr(file, '/') == nullptr) file = "/proc/self/exe";
  struct stat st {};
  if (stat(file, &st) == 0) {
    self.have_file = true;
    self.dev = st.st_dev;
    self.ino = st.st_ino;
  }
  return self;
}

struct LoadedObject {
  std::string path;
  const void* base;
};

// Collected first and examined afterwards: dlopen must not run inside dl_iterate_phdr,
// which holds the loader's lock.
std::vector<LoadedObject> loaded_objects() {
  std::vector<LoadedObject> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<LoadedObject>*>(data)->push_back(
              {info->dlpi_name, reinterpret_cast<const void*>(info->dlpi_addr)});
        }
        return 0;
      },
      &out);
  return out;
}

std::string basename_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Binds every entry point of the list; a missing required one makes the library unusable.
class Binder {
 public:
  explicit Binder(void* handle) : handle_(handle) {}

  template <class Fn>
  void operator()(const RealNcclEntryInfo& info, Fn& slot) {
    std::string symbol = std::string("pnccl") + info.name;
    void* p = dlsym(handle_, symbol.c_str());
    if (p == nullptr) p = dlsym(handle_, symbol.c_str() + 1);  // "nccl..."
    slot = reinterpret_cast<Fn>(p);
    if (p == nullptr) append(info.since < kOptionalFrom ? &missing_required_ : &missing_optional_, info.name);
  }

  const std::string& missing_required() const { return missing_required_; }
  const std::string& missing_optional() const { return missing_optional_; }

 private:
  static void append(std::string* list, const char* name) {
    if (!list->empty()) *list += ", ";
    *list += std::string("nccl") + name;
  }

  void* handle_;
  std::string missing_required_;
  std::string missing_optional_;
};

// One pass over the candidates: remembers what it refused, so that a failed search can
// say why, and which files it already tried (one file is often reachable by several
// paths and symlinks).
class Search {
 public:
  Search() : self_(find_self()) {}

  // Loads `path` if it is a usable real NCCL. `origin` says how the path was found.
  // A missing file is worth reporting only for paths someone named or loaded.
  std::unique_ptr<RealNccl> try_file(const std::string& path, const char* origin,
                                     bool report_absent) {
    char resolved[PATH_MAX];
    struct stat st {};
    if (realpath(path.c_str(), resolved) == nullptr || stat(resolved, &st) != 0) {
      if (report_absent) refuse(path, origin, "no such file");
      else ++absent_;
      return nullptr;
    }
    if (!tried_.insert({st.st_dev, st.st_ino}).second) return nullptr;
    if (self_.have_file && st.st_dev == self_.dev && st.st_ino == self_.ino) {
      refuse(resolved, origin, "this is Purlin itself");
      return nullptr;
    }
    if (elf_file_has_purlin_note(resolved)) {
      refuse(resolved, origin, "another build of Purlin, not NCCL");
      return nullptr;
    }
    void* handle = dlopen(resolved, kOpenFlags);
    if (handle == nullptr) {
      const char* why = dlerror();
      refuse(resolved, origin, std::string("dlopen failed: ") + (why ? why : "unknown error"));
      return nullptr;
    }
    auto lib = std::make_unique<RealNccl>();
    lib->path = resolved;
    lib->handle = handle;
    Binder binder(handle);
    for_each_entry(*lib, binder);
    if (!binder.missing_required().empty()) {
      refuse(resolved, origin, "lacks " + binder.missing_required());
      return nullptr;
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(lib->GetVersion), &info) != 0 &&
        info.dli_fbase == self_.base) {
      refuse(resolved, origin, "its ncclGetVersion is Purlin's own");
      return nullptr;
    }
    if (lib->GetVersion(&lib->version) != ncclSuccess) {
      refuse(resolved, origin, "ncclGetVersion failed");
      return nullptr;
    }
    found_ = resolved;
    found_ += " (NCCL " + version_text(lib->version) + ", via " + origin + ")";
    if (!binder.missing_optional().empty()) {
      PURLIN_INFO(kInit, "real NCCL %s predates %s; those calls will fail", found_.c_str(),
                  binder.missing_optional().c_str());
    }
    return lib;
  }

  const void* self_base() const { return self_.base; }

  std::string describe() const {
    if (!found_.empty()) return found_;
    std::string text = "no real NCCL found";
    if (!refused_.empty()) text += "; refused: " + refused_;
    if (absent_ > 0) text += "; " + std::to_string(absent_) + " usual locations hold no libnccl.so.2";
    return text;
  }

 private:
  void refuse(const std::string& path, const char* origin, const std::string& why) {
    PURLIN_INFO(kInit, "not using %s (from %s) as the real NCCL: %s", path.c_str(), origin, why.c_str());
    if (!refused_.empty()) refused_ += "; ";
    refused_ += path + ": " + why;
  }

  SelfObject self_;
  std::set<std::pair<dev_t, ino_t>> tried_;
  std::string refused_;
  std::string found_;
  int absent_ = 0;
};

// The usual locations, in order, each with the origin reported for it.
std::vector<std::pair<std::string, const char*>> usual_locations(
    const std::vector<LoadedObject>& loaded) {
  std::vector<std::pair<std::string, const char*>> out;
  auto add_dir = [&out](const std::string& dir, const char* origin) {
    if (!dir.empty()) out.emplace_back(dir + "/libnccl.so.2", origin);
  };
  // pip's nvidia-nccl-cu* wheel: <site-packages>/nvidia/nccl/lib. Any loaded object under
  // a site-packages directory (torch's libraries, the interpreter's extension modules)
  // tells us where that directory is. It comes first among the usual places: a framework
  // that ships this wheel was built and tested against it, while a system NCCL may be older.
  std::set<std::string> sites;
  for (const LoadedObject& obj : loaded) {
    for (const char* marker : {"/site-packages/", "/dist-packages/"}) {
      size_t at = obj.path.find(marker);
      if (at == std::string::npos) continue;
      std::string site = obj.path.substr(0, at + std::strlen(marker) - 1);
      if (sites.insert(site).second) add_dir(site + "/nvidia/nccl/lib", "the Python nvidia-nccl package");
    }
  }
  std::string ld_path = env::get_string("LD_LIBRARY_PATH");
  for (size_t begin = 0; begin <= ld_path.size();) {
    size_t end = ld_path.find(':', begin);
    if (end == std::string::npos) end = ld_path.size();
    add_dir(ld_path.substr(begin, end - begin), "LD_LIBRARY_PATH");
    begin = end + 1;
  }
  // A toolkit named by the environment is an explicit choice: ahead of the system dirs.
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string root = env::get_string(var);
    if (root.empty()) continue;
    add_dir(root + "/lib64", "the CUDA toolkit");
    add_dir(root + "/lib", "the CUDA toolkit");
  }
#if defined(__x86_64__)
  const std::string triplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  const std::string triplet = "aarch64-linux-gnu";
#else
  const std::string triplet;
#endif
  if (!triplet.empty()) {
    add_dir("/usr/lib/" + triplet, "a system library directory");
    add_dir("/lib/" + triplet, "a system library directory");
  }
  for (const char* dir : {"/usr/lib64", "/lib64", "/usr/local/lib", "/usr/lib"}) {
    add_dir(dir, "a system library directory");
  }
  add_dir("/usr/local/cuda/lib64", "the CUDA toolkit");
  add_dir("/usr/local/cuda/lib", "the CUDA toolkit");
  return out;
}

std::unique_ptr<RealNccl> run_search(std::string* describe) {
  Search search;
  std::unique_ptr<RealNccl> lib;
  std::string explicit_path = env::get_string("PURLIN_NCCL_LIBRARY");
  if (!explicit_path.empty()) {
    lib = search.try_file(explicit_path, "PURLIN_NCCL_LIBRARY", true);
  } else {
    std::vector<LoadedObject> loaded = loaded_objects();
    for (const LoadedObject& obj : loaded) {
      if (lib) break;
      if (obj.base == search.self_base()) continue;
      if (basename_of(obj.path).rfind("libnccl.so", 0) != 0) continue;
      lib = search.try_file(obj.path, "an already loaded library", true);
    }
    for (const auto& [path, origin] : usual_locations(loaded)) {
      if (lib) break;
      lib = search.try_file(path, origin, false);
    }
  }
  if (describe != nullptr) *describe = search.describe();
  return lib;
}

struct Loaded {
  std::unique_ptr<RealNccl> lib;
  std::string describe;
};

Loaded load_once() noexcept {
  Loaded out;
  try {
    out.lib = run_search(&out.describe);
  } catch (...) {  // only allocation can throw here; forwarding then stays unavailable
    out.lib.reset();
    out.describe = "no real NCCL: the search ran out of memory";
  }
  if (out.lib) {
    PURLIN_INFO(kInit, "forwarding to real NCCL %s", out.describe.c_str());
  } else {
    PURLIN_WARN("%s. Calls Purlin forwards will fail; set PURLIN_NCCL_LIBRARY=/path/to/libnccl.so.2",
                out.describe.c_str());
  }
  return out;
}

const Loaded& loaded_once() noexcept {
  static const Loaded loaded = load_once();  // C++ guarantees one thread initializes it
  return loaded;
}

}  // namespace

std::string version_text(int v) {
  // NCCL_VERSION(): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 on.
  int major = v >= 10000 ? v / 10000 : v / 1000;
  int minor = v >= 10000 ? (v % 10000) / 100 : (v % 1000) / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

const RealNcclEntryInfo* entry_info(const char* name) {
  if (std::strncmp(name, "nccl", 4) == 0) name += 4;
  for (const RealNcclEntryInfo& info : kRealNcclEntryInfo)
    if (std::strcmp(info.name, name) == 0) return &info;
  return nullptr;
}

const RealNccl* real_nccl() noexcept { return loaded_once().lib.get(); }

std::string real_nccl_describe() { return loaded_once().describe; }

std::unique_ptr<RealNccl> search_real_nccl(std::string* describe) noexcept {
  try {
    return run_search(describe);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace purlin::shim
