// The real-NCCL loader (nccl_shim/real_nccl.h) linked directly into the test, against the
// fake NCCL, a partial library, a build of Purlin and, when present, the toolkit's NCCL.
#include "real_nccl.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <string>
#include <thread>
#include <vector>

#include "fake_nccl.h"
#include "fake_nccl_client.h"
#include "purlin_elf_note.h"

namespace purlin::shim {
namespace {

std::string resolved(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) != nullptr ? std::string(buf) : std::string();
}

// Each entry point the library exports is bound to its own pnccl<Name> (or its alias ncclX:
// same address); one it lacks stays null, which only entry points newer than 2.19 may.
void expect_bound_as_exported(const RealNccl& r) {
  void* handle = dlopen(r.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << r.path << " is not loaded";
  int visited = 0;
  for_each_entry(r, [&](const RealNcclEntryInfo& info, auto fn) {
    ++visited;
    const std::string name = info.name;
    void* exported = dlsym(handle, ("pnccl" + name).c_str());
    EXPECT_EQ(reinterpret_cast<void*>(fn), exported) << name << " is bound to the wrong symbol";
    if (info.since < kOptionalFrom) {
      EXPECT_NE(exported, nullptr) << name << " is required";
    }
  });
  EXPECT_EQ(visited, kRealNcclEntryPoints);
  dlclose(handle);
}

// Bound to every entry point: the library has them all.
void expect_fully_bound(const RealNccl& r) {
  expect_bound_as_exported(r);
  for_each_entry(r, [](const RealNcclEntryInfo& info, auto fn) { EXPECT_NE(fn, nullptr) << info.name; });
}

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("PURLIN_NCCL_LIBRARY");
    setenv("LD_LIBRARY_PATH", "", 1);
    setenv("CUDA_HOME", "/nonexistent", 1);
    setenv("CUDA_PATH", "/nonexistent", 1);
  }
  std::unique_ptr<RealNccl> search() { return search_real_nccl(&describe_); }
  std::string describe_;
};

TEST_F(LoaderTest, ExplicitPathLoadsTheFake) {
  setenv("PURLIN_NCCL_LIBRARY", FAKE_NCCL_PATH, 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->version, FAKE_NCCL_VERSION);
  EXPECT_EQ(lib->path, resolved(FAKE_NCCL_PATH));
  EXPECT_NE(describe_.find(lib->path), std::string::npos) << describe_;
  EXPECT_NE(describe_.find("PURLIN_NCCL_LIBRARY"), std::string::npos) << describe_;
  expect_fully_bound(*lib);
}

TEST_F(LoaderTest, ExplicitPathThroughASymlinkLoadsTheTarget) {
  std::string link = std::string(FAKE_NCCL_DIR) + "/libnccl.so.2";
  setenv("PURLIN_NCCL_LIBRARY", link.c_str(), 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->path, resolved(FAKE_NCCL_PATH));
}

TEST_F(LoaderTest, NonexistentExplicitPathYieldsNothing) {
  setenv("PURLIN_NCCL_LIBRARY", "/nonexistent/dir/libnccl.so.2", 1);
  // The fake is reachable on the path, but an explicit setting is never replaced.
  setenv("LD_LIBRARY_PATH", FAKE_NCCL_DIR, 1);
  auto lib = search();
  EXPECT_EQ(lib, nullptr);
  EXPECT_NE(describe_.find("/nonexistent/dir/libnccl.so.2: no such file"), std::string::npos) << describe_;
}

TEST_F(LoaderTest, PurlinItselfIsRefusedWithoutBeingLoaded) {
  setenv("PURLIN_NCCL_LIBRARY", PURLIN_NCCL_PATH, 1);
  ASSERT_TRUE(elf_file_has_purlin_note(PURLIN_NCCL_PATH)) << "the build lost its ELF note";
  auto lib = search();
  EXPECT_EQ(lib, nullptr);
  EXPECT_NE(describe_.find("another build of Purlin"), std::string::npos) << describe_;
  EXPECT_EQ(dlopen(PURLIN_NCCL_PATH, RTLD_NOW | RTLD_NOLOAD), nullptr) << "Purlin was loaded to be inspected";
}

TEST_F(LoaderTest, PartialLibraryIsRefusedNamingWhatItLacks) {
  setenv("PURLIN_NCCL_LIBRARY", PARTIAL_NCCL_PATH, 1);
  auto lib = search();
  EXPECT_EQ(lib, nullptr);
  // Every required entry point it lacks, in the list's order; the optional ones are no reason.
  EXPECT_NE(describe_.find("lacks ncclAllGather, ncclAllReduce, "), std::string::npos) << describe_;
  EXPECT_NE(describe_.find(", ncclGetUniqueId, "), std::string::npos) << describe_;
  EXPECT_EQ(describe_.find("ncclCommSuspend"), std::string::npos) << describe_;
}

TEST_F(LoaderTest, SearchSkipsPurlinOnTheLibraryPathAndFindsTheFake) {
  std::string purlin_dir = resolved(PURLIN_NCCL_PATH);
  purlin_dir.resize(purlin_dir.rfind('/'));
  std::string path = "/nonexistent:" + purlin_dir + "::" + FAKE_NCCL_DIR;
  setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->path, resolved(FAKE_NCCL_PATH));
  EXPECT_EQ(lib->version, FAKE_NCCL_VERSION);
  EXPECT_NE(describe_.find("LD_LIBRARY_PATH"), std::string::npos) << describe_;
}

TEST_F(LoaderTest, CudaHomeIsSearched) {
  setenv("CUDA_HOME", FAKE_CUDA_HOME, 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->path, resolved(FAKE_NCCL_PATH));
  EXPECT_NE(describe_.find("CUDA toolkit"), std::string::npos) << describe_;
}

TEST_F(LoaderTest, AlreadyLoadedLibncclIsPreferred) {
  // The loader knows a loaded object by the name it was first loaded under; once an
  // earlier test in this process loaded the fake as libfake_nccl.so, that stays its name.
  if (void* h = dlopen(FAKE_NCCL_PATH, RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(h);
    GTEST_SKIP() << "the fake is already loaded under another name; run this test in its own process (ctest does)";
  }
  // Load the fake under a libnccl.so.2 name, as an application linked against NCCL would;
  // the usual locations hold nothing (or the toolkit's NCCL, found later in the order).
  std::string link = std::string(FAKE_NCCL_DIR) + "/libnccl.so.2";
  void* h = dlopen(link.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->path, resolved(FAKE_NCCL_PATH));
  EXPECT_NE(describe_.find("already loaded"), std::string::npos) << describe_;
  dlclose(h);
}

TEST_F(LoaderTest, RealNcclIsLoadedOnceForAllThreads) {
  setenv("PURLIN_NCCL_LIBRARY", FAKE_NCCL_PATH, 1);
  std::vector<const RealNccl*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&seen, i] { seen[i] = real_nccl(); });
  for (auto& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr) << real_nccl_describe();
  for (const RealNccl* r : seen) EXPECT_EQ(r, seen[0]);
  EXPECT_EQ(seen[0]->version, FAKE_NCCL_VERSION);
  // Later changes of the environment do not matter: the first answer is kept.
  setenv("PURLIN_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  EXPECT_EQ(real_nccl(), seen[0]);
  EXPECT_NE(real_nccl_describe().find(seen[0]->path), std::string::npos);
}

// The fake's own contract, which the forwarding tests rely on: results configurable per
// entry point over FAKE_NCCL_RESULT, foreign communicators refused and logged.
TEST_F(LoaderTest, FakeResultsAreConfigurable) {
  setenv("PURLIN_NCCL_LIBRARY", FAKE_NCCL_PATH, 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  fake_nccl::Client fake(FAKE_NCCL_PATH);
  ASSERT_TRUE(fake.loaded());
  fake.reset();
  ncclUniqueId id;
  setenv("FAKE_NCCL_RESULT", "3", 1);
  EXPECT_EQ(lib->GetUniqueId(&id), ncclInternalError);
  fake.set_result("*", ncclInvalidUsage);
  EXPECT_EQ(lib->GetUniqueId(&id), ncclInvalidUsage);
  fake.set_result("GetUniqueId", ncclSuccess);
  EXPECT_EQ(lib->GetUniqueId(&id), ncclSuccess);
  fake.reset();
  unsetenv("FAKE_NCCL_RESULT");
  ASSERT_EQ(lib->GetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(lib->CommInitRank(&comm, 1, id, 0), ncclSuccess);
  auto calls = fake.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].arg("commId"), calls[0].arg("out"));
  EXPECT_EQ(calls[1].arg("out"), fake_nccl::hex(comm));

  static char buf[8];
  auto foreign = reinterpret_cast<ncclComm_t>(buf);
  EXPECT_EQ(lib->AllReduce(buf, buf, 1, ncclInt8, ncclSum, foreign, nullptr), ncclInvalidArgument);
  EXPECT_EQ(fake.calls_named("AllReduce").back().arg("comm_known"), "0");
  EXPECT_EQ(lib->CommDestroy(comm), ncclSuccess);
}

// A real NCCL older than Purlin's ABI is used, with the entry points it predates left null
// (forward.h: call_real turns those into one clean error).
TEST_F(LoaderTest, OlderNcclIsUsedWithoutItsNewerEntryPoints) {
  setenv("PURLIN_NCCL_LIBRARY", FAKE_NCCL_228_PATH, 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_EQ(lib->version, FAKE_NCCL_228_VERSION);
  expect_bound_as_exported(*lib);
  for_each_entry(*lib, [](const RealNcclEntryInfo& info, auto fn) {
    if (info.since <= NCCL_VERSION(2, 28, 99)) {
      EXPECT_NE(fn, nullptr) << info.name;
    } else {
      EXPECT_EQ(fn, nullptr) << info.name << " appeared after 2.28";
    }
  });
  EXPECT_STREQ(entry_info("ncclCommSuspend")->name, "CommSuspend");
  EXPECT_EQ(entry_info("CommSuspend")->since, NCCL_VERSION(2, 29, 7));
  EXPECT_EQ(entry_info("ncclNoSuchFunction"), nullptr);
}

TEST_F(LoaderTest, TheToolkitNcclBindsWhatItExports) {
  if (std::string(REFERENCE_NCCL_PATH).empty()) GTEST_SKIP() << "no real libnccl.so.2 in the CUDA toolkit";
  setenv("PURLIN_NCCL_LIBRARY", REFERENCE_NCCL_PATH, 1);
  auto lib = search();
  ASSERT_NE(lib, nullptr) << describe_;
  EXPECT_GE(lib->version, NCCL_VERSION(2, 19, 0));
  expect_bound_as_exported(*lib);
}

}  // namespace
}  // namespace purlin::shim
