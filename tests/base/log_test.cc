// base/log in NCCL's conventions: the line shape of each level with Purlin's tag, the levels
// of PURLIN_DEBUG / NCCL_DEBUG, NCCL_DEBUG_SUBSYS with its '^' negation, NCCL_DEBUG_FILE's
// %h and %p, when the version line prints and how, and base/env's "set by environment" line.
#include "base/log.h"

#include "base/env.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace purlin::log {
namespace {

constexpr const char* kVariables[] = {"PURLIN_DEBUG", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE",
                                      "PURLIN_DEBUG_FILE"};

std::string short_host() {
  char host[256] = "";
  gethostname(host, sizeof(host) - 1);
  std::string h(host);
  return h.substr(0, h.find('.'));
}

// "host:pid:tid" of this thread, as every line but the bare version line starts.
std::string who() {
  return short_host() + ":" + std::to_string(getpid()) + ":" + std::to_string(syscall(SYS_gettid));
}

// Each test starts from an environment without any logging variable, sets what it needs and
// re-reads it; the log is left as the unset environment has it.
class Log : public testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override {
    clear();
    set_device_query(nullptr);
    reset();
  }

  static void clear() {
    for (const char* v : kVariables) unsetenv(v);
  }
  static void with(std::initializer_list<std::pair<const char*, const char*>> vars) {
    clear();
    for (const auto& [name, value] : vars) setenv(name, value, 1);
    reset();
  }

  // What `emit` writes on stderr.
  template <typename F>
  static std::string stderr_of(F emit) {
    testing::internal::CaptureStderr();
    emit();
    return testing::internal::GetCapturedStderr();
  }
};

TEST_F(Log, InfoLineHasNcclShapeAndPurlinTag) {
  with({{"PURLIN_DEBUG", "INFO"}});
  const std::string err = stderr_of([] { PURLIN_INFO(kInit, "comm %d ready", 7); });
  EXPECT_EQ(err, who() + " [0] NCCL INFO Purlin: comm 7 ready\n");
}

TEST_F(Log, WarnLineIsSetApartAndTimestampedWithFileAndLine) {
  // The default level prints warnings without any variable set.
  with({});
  const int line = __LINE__ + 1;
  const std::string err = stderr_of([] { PURLIN_WARN("ncclAllReduce: %s is null", "sendbuff"); });
  const std::string rest =
      who() + " [0] log_test.cc:" + std::to_string(line) + " NCCL WARN Purlin: ncclAllReduce: sendbuff is null\n";
  ASSERT_GT(err.size(), rest.size()) << err;
  EXPECT_EQ(err.substr(err.size() - rest.size()), rest) << err;
  const std::string lead = err.substr(0, err.size() - rest.size());
  EXPECT_TRUE(std::regex_match(lead, std::regex("\n\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\] "))) << err;
}

TEST_F(Log, TraceLineCarriesMillisecondsAndFileAndLine) {
  with({{"PURLIN_DEBUG", "TRACE"}});
  const int line = __LINE__ + 1;
  const std::string err = stderr_of([] { PURLIN_TRACE(kBootstrap, "step %s", "one"); });
  const std::regex shape(who() + " \\[0\\] \\d+\\.\\d{6} log_test\\.cc:" + std::to_string(line) +
                         " NCCL TRACE Purlin: step one\n");
  EXPECT_TRUE(std::regex_match(err, shape)) << err;
}

TEST_F(Log, LinesNameTheCallersCudaDevice) {
  with({{"PURLIN_DEBUG", "INFO"}});
  set_device_query([] { return 3; });
  EXPECT_EQ(stderr_of([] { PURLIN_INFO(kInit, "x"); }), who() + " [3] NCCL INFO Purlin: x\n");
  // Unknown (no GPU, no driver): 0, as NCCL prints when cudaGetDevice fails.
  set_device_query([] { return -1; });
  EXPECT_EQ(stderr_of([] { PURLIN_INFO(kInit, "x"); }), who() + " [0] NCCL INFO Purlin: x\n");
}

TEST_F(Log, Levels) {
  with({});
  EXPECT_TRUE(enabled(Level::kWarn));
  EXPECT_FALSE(enabled(Level::kInfo));
  // NCCL_DEBUG raises Purlin's level but never lowers it below WARN.
  with({{"NCCL_DEBUG", "info"}});
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_FALSE(enabled(Level::kTrace, Subsys::kInit));
  with({{"NCCL_DEBUG", "NONE"}});
  EXPECT_TRUE(enabled(Level::kWarn));
  with({{"NCCL_DEBUG", "VERSION"}});
  EXPECT_TRUE(enabled(Level::kWarn));
  // PURLIN_DEBUG decides alone, in both directions.
  with({{"PURLIN_DEBUG", "NONE"}, {"NCCL_DEBUG", "INFO"}});
  EXPECT_FALSE(enabled(Level::kWarn));
  EXPECT_EQ(stderr_of([] { PURLIN_WARN("silenced"); }), "");
  with({{"PURLIN_DEBUG", "WARN"}, {"NCCL_DEBUG", "TRACE"}});
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kInit));
  with({{"PURLIN_DEBUG", "TRACE"}});
  EXPECT_TRUE(enabled(Level::kTrace, Subsys::kInit));
  // An unknown name keeps the default.
  with({{"PURLIN_DEBUG", "LOUD"}});
  EXPECT_TRUE(enabled(Level::kWarn));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kInit));
}

TEST_F(Log, SubsysDefaultIsNcclsInitBootstrapEnv) {
  with({{"PURLIN_DEBUG", "INFO"}});
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kBootstrap));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kEnv));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kGraph));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kAlloc));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kP2p));
}

TEST_F(Log, SubsysListSelects) {
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "GRAPH,alloc,NET"}});
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kGraph));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kAlloc));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kNet));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kBootstrap));
  const std::string err = stderr_of([] {
    PURLIN_INFO(kInit, "hidden");
    PURLIN_INFO(kGraph, "shown");
  });
  EXPECT_EQ(err, who() + " [0] NCCL INFO Purlin: shown\n");

  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "ALL"}});
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kP2p));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kRas));
  // Names NCCL does not know select nothing.
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "NOSUCH"}});
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kInit));
}

TEST_F(Log, SubsysLeadingCaretExcludesTheList) {
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "^BOOTSTRAP,GRAPH"}});
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kBootstrap));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kGraph));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kAlloc));  // everything not listed, not just the default
  const std::string err = stderr_of([] {
    PURLIN_INFO(kBootstrap, "hidden");
    PURLIN_INFO(kAlloc, "shown");
  });
  EXPECT_EQ(err, who() + " [0] NCCL INFO Purlin: shown\n");

  // As NCCL, '^' counts only in front of the list: "INIT,^ENV" is INIT and a name it does
  // not know.
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,^ENV"}});
  EXPECT_TRUE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kEnv));

  // Excluding everything hides INFO and TRACE; a warning still prints.
  with({{"PURLIN_DEBUG", "TRACE"}, {"NCCL_DEBUG_SUBSYS", "^ALL"}});
  EXPECT_FALSE(enabled(Level::kInfo, Subsys::kInit));
  EXPECT_FALSE(enabled(Level::kTrace, Subsys::kInit));
  EXPECT_TRUE(enabled(Level::kWarn));
}

class LogFile : public Log {
 protected:
  void SetUp() override {
    Log::SetUp();
    char pattern[] = "/tmp/purlin_log_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    Log::TearDown();  // closes the file
    std::filesystem::remove_all(dir_);
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(LogFile, NcclDebugFileExpandsHostAndPid) {
  const std::string pattern = dir_ + "/nccl.%h.%p.%%.%x.log";
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_FILE", pattern.c_str()}});
  const std::string err = stderr_of([] { PURLIN_INFO(kInit, "to the file"); });
  EXPECT_EQ(err, "");
  reset();  // re-opening truncates, as NCCL's "w"; the line above is gone, this one stays
  PURLIN_INFO(kInit, "after reset");
  const std::string path = dir_ + "/nccl." + short_host() + "." + std::to_string(getpid()) + ".%.%x.log";
  EXPECT_EQ(read(path), who() + " [0] NCCL INFO Purlin: after reset\n");
}

TEST_F(LogFile, PurlinDebugFileWinsOverNcclDebugFile) {
  const std::string nccl = dir_ + "/nccl.log", purlin = dir_ + "/purlin.%p.log";
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_FILE", nccl.c_str()}, {"PURLIN_DEBUG_FILE", purlin.c_str()}});
  PURLIN_INFO(kInit, "mine");
  EXPECT_FALSE(std::filesystem::exists(nccl));
  EXPECT_EQ(read(dir_ + "/purlin." + std::to_string(getpid()) + ".log"), who() + " [0] NCCL INFO Purlin: mine\n");
}

TEST_F(LogFile, NoFileForVersionAloneNorForAnUnwritablePath) {
  const std::string path = dir_ + "/v.log";
  with({{"PURLIN_DEBUG", "VERSION"}, {"NCCL_DEBUG_FILE", path.c_str()}});
  const std::string err = stderr_of([] { write_version("NCCL version 2.32.3 (Purlin test)"); });
  EXPECT_EQ(err, "NCCL version 2.32.3 (Purlin test)\n");
  EXPECT_FALSE(std::filesystem::exists(path));
  // A directory that does not exist: the lines stay on stderr.
  const std::string missing = dir_ + "/no/such/dir/x.log";
  with({{"NCCL_DEBUG_FILE", missing.c_str()}});
  EXPECT_NE(stderr_of([] { PURLIN_WARN("still seen"); }).find("NCCL WARN Purlin: still seen"), std::string::npos);
}

TEST_F(Log, VersionLineBareAtVersionAndWarnAsInfoAboveAndNoneByDefault) {
  const std::string bare = "NCCL version 2.32.3+cuda13.0 (Purlin 0.1.0)\n";
  // The version line the current environment prints; version_enabled() must agree.
  const auto version = [] {
    const std::string out =
        stderr_of([] { write_version("NCCL version %s (Purlin %s)", "2.32.3+cuda13.0", "0.1.0"); });
    EXPECT_EQ(version_enabled(), !out.empty()) << out;
    return out;
  };
  with({{"NCCL_DEBUG", "VERSION"}});
  EXPECT_EQ(version(), bare);
  with({{"NCCL_DEBUG", "WARN"}});
  EXPECT_EQ(version(), bare);
  with({{"PURLIN_DEBUG", "VERSION"}});
  EXPECT_EQ(version(), bare);
  // At INFO an INFO line, without Purlin's tag: it reads "NCCL INFO NCCL version" as NCCL's.
  with({{"NCCL_DEBUG", "INFO"}});
  EXPECT_EQ(version(), who() + " [0] NCCL INFO " + bare);
  // NCCL logs it under every subsystem: any selected one shows it, none hides it.
  with({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "COLL"}});
  EXPECT_EQ(version(), who() + " [0] NCCL INFO " + bare);
  with({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "^ALL"}});
  EXPECT_EQ(version(), "");
  // Purlin's default level is WARN, but nobody asked for a version: none, as NCCL unset.
  with({});
  EXPECT_EQ(version(), "");
  with({{"PURLIN_DEBUG", "NONE"}, {"NCCL_DEBUG", "VERSION"}});
  EXPECT_EQ(version(), "");
}

TEST_F(Log, EnvLogsEachSettingOnceUnderEnv) {
  setenv("PURLIN_LOG_TEST_SLOTS", "12", 1);
  setenv("LOG_TEST_NOT_A_SETTING", "x", 1);
  with({{"PURLIN_DEBUG", "INFO"}});
  const std::string err = stderr_of([] {
    EXPECT_EQ(env::get_int("PURLIN_LOG_TEST_SLOTS", 0), 12);
    EXPECT_EQ(env::get_string("PURLIN_LOG_TEST_SLOTS"), "12");
    EXPECT_EQ(env::get_string("LOG_TEST_NOT_A_SETTING"), "x");
    EXPECT_EQ(env::get_int("PURLIN_LOG_TEST_UNSET", 3), 3);
  });
  EXPECT_EQ(err, who() + " [0] NCCL INFO Purlin: PURLIN_LOG_TEST_SLOTS set by environment to 12\n");
  // Filtered like any INFO line.
  setenv("NCCL_LOG_TEST_OTHER", "1", 1);
  with({{"PURLIN_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "^ENV"}});
  EXPECT_EQ(stderr_of([] { (void)env::get_int("NCCL_LOG_TEST_OTHER", 0); }), "");
  unsetenv("PURLIN_LOG_TEST_SLOTS");
  unsetenv("LOG_TEST_NOT_A_SETTING");
  unsetenv("NCCL_LOG_TEST_OTHER");
}

}  // namespace
}  // namespace purlin::log
