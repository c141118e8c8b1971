// The fixture of the forwarding tests: Purlin's libnccl.so.2 in front of the fake NCCL
// (PURLIN_NCCL_LIBRARY, see CMakeLists.txt), one 1-rank Purlin communicator per test, and
// access to what the fake saw.
//
// Each test distinguishes its arguments from every other call's, makes the fake return an
// error code Purlin never produces itself (ncclRemoteError) for the entry point under test,
// and checks both ends. No GPU: buffers are host memory the fake never touches, streams
// are made-up values.
#pragma once

#include <nccl.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fake_nccl.h"
#include "fake_nccl_client.h"

namespace forwarding {

using fake_nccl::hex;
using fake_nccl::LoggedCall;

inline constexpr ncclResult_t kFakeError = ncclRemoteError;

inline cudaStream_t stream(uintptr_t v) { return reinterpret_cast<cudaStream_t>(v); }

alignas(4096) inline char g_send[1 << 16];
alignas(4096) inline char g_recv[1 << 16];

inline std::string str(long long v) { return std::to_string(v); }

class Forwarding : public ::testing::Test {
 protected:
  void SetUp() override {
    int version = 0;
    ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);  // loads the real (fake) NCCL
    ASSERT_EQ(version, expected_version()) << "Purlin did not load the fake NCCL; is PURLIN_NCCL_LIBRARY set?";
    fake_ = fake_nccl::Client(FAKE_NCCL_PATH);
    ASSERT_TRUE(fake_.loaded()) << FAKE_NCCL_PATH << " is not loaded in this process";
    fake_.reset();
    ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess);
    ASSERT_EQ(ncclCommInitRank(&comm_, 1, id_, 0), ncclSuccess);
  }

  void TearDown() override {
    if (comm_ != nullptr) {
      EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
    }
  }

  // The build of the fake the test runs against (fake_nccl.h).
  virtual int expected_version() const { return FAKE_NCCL_VERSION; }

  std::vector<LoggedCall> calls() const { return fake_.calls(); }

  // The last call of `name`, failing the test when there is none.
  LoggedCall last(const std::string& name) const {
    auto all = fake_.calls_named(name);
    EXPECT_FALSE(all.empty()) << "the fake never saw " << name;
    return all.empty() ? LoggedCall{} : all.back();
  }

  // The fake's handle of the real communicator, created by the lazy real init.
  std::string real_comm() const {
    auto inits = fake_.calls_named("CommInitRankConfig");
    for (const LoggedCall& c : fake_.calls_named("CommInitRank")) inits.push_back(c);
    EXPECT_EQ(inits.size(), 1u) << "expected exactly one real communicator";
    return inits.empty() ? std::string("none") : inits[0].arg("out");
  }

  // Creates the real communicator through a forwarded call; returns the fake's handle.
  // The log is cleared unless the test wants to see what the creation did.
  std::string make_real_comm(bool clear_log = true) {
    EXPECT_EQ(ncclAllReduce(g_send, g_recv, 1, ncclInt8, ncclSum, comm_, stream(0x51)), ncclSuccess);
    std::string rc = real_comm();
    if (clear_log) fake_.reset();
    return rc;
  }

  // `c` ran on `comm`, the real communicator, which the fake knows as its own.
  void expect_on_real_comm(const LoggedCall& c, const std::string& comm) {
    EXPECT_EQ(c.arg("comm"), comm) << c.line;
    EXPECT_EQ(c.arg("comm_known"), "1") << c.line;
  }

  static void expect_args(const LoggedCall& c, std::vector<std::pair<std::string, std::string>> expected) {
    for (const auto& [key, value] : expected) EXPECT_EQ(c.arg(key), value) << key << " in: " << c.line;
  }

  fake_nccl::Client fake_;  // set once Purlin has loaded the fake
  ncclUniqueId id_{};
  ncclComm_t comm_ = nullptr;
};

}  // namespace forwarding
