// runtime::retire on the host: a fake device state over real bootstrap groups (loopback). No
// rank frees its peer-visible memory before every peer has left or died; ranks of one thread
// leave one after another without waiting for each other; abort returns within a second, also
// with a dead peer; launches that do not end keep everything allocated.
#include "runtime/teardown.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bootstrap_test_util.h"

namespace purlin::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What happened to one fake state; outlives it (the state may die on a background thread).
struct Record {
  std::mutex mu;
  std::vector<std::string> calls;
  std::atomic<bool> destroyed{false};
  std::atomic<bool> freed{false};

  void add(const std::string& call) {
    std::lock_guard lock(mu);
    calls.push_back(call);
  }
  std::vector<std::string> list() {
    std::lock_guard lock(mu);
    return calls;
  }
};

class FakeState final : public RetiringState {
 public:
  FakeState(std::shared_ptr<Record> record, bool launches_end) : record_(std::move(record)), end_(launches_end) {}
  ~FakeState() override {
    record_->freed = !leaked_;
    record_->destroyed = true;
  }
  void abort() override { record_->add("abort"); }
  bool quiesce(std::optional<milliseconds> bound) override {
    record_->add(bound ? "quiesce bounded" : "quiesce");
    return end_;
  }
  void release_private() override { record_->add("release_private"); }
  void leak() override {
    record_->add("leak");
    leaked_ = true;
  }

 private:
  std::shared_ptr<Record> record_;
  bool end_;
  bool leaked_ = false;
};

bool wait_for(const std::atomic<bool>& flag, milliseconds bound) {
  const auto end = Clock::now() + bound;
  while (!flag && Clock::now() < end) std::this_thread::sleep_for(milliseconds(5));
  return flag;
}

class Teardown : public ::testing::Test {
 protected:
  void SetUp() override { testing::use_loopback_env(); }

  std::vector<std::shared_ptr<Bootstrap>> make_group(int n) {
    ncclUniqueId id;
    EXPECT_EQ(create_unique_id(&id), ncclSuccess);
    std::vector<std::shared_ptr<Bootstrap>> group(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        std::unique_ptr<Bootstrap> b;
        if (Bootstrap::create(id, r, n, &b) == ncclSuccess && b->connect_all() == ncclSuccess) {
          group[static_cast<size_t>(r)] = std::move(b);
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < n; ++r) EXPECT_NE(group[static_cast<size_t>(r)], nullptr) << "rank " << r;
    return group;
  }
};

TEST_F(Teardown, DestroyFreesOnlyOnceEveryPeerHasLeft) {
  auto group = make_group(2);
  auto first = std::make_shared<Record>();
  auto second = std::make_shared<Record>();
  // One thread destroys both ranks, one after the other (ncclCommInitAll's communicators).
  const auto start = Clock::now();
  retire(std::make_unique<FakeState>(first, true), group[0], Ending::kDestroy);
  EXPECT_LT(Clock::now() - start, milliseconds(500)) << "the first rank waited for the second";
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(first->destroyed) << "rank 0 freed its block while rank 1 may still read it";
  EXPECT_EQ(first->list(), (std::vector<std::string>{"quiesce", "release_private"}));

  retire(std::make_unique<FakeState>(second, true), group[1], Ending::kDestroy);
  EXPECT_TRUE(wait_for(second->destroyed, milliseconds(2000)));
  EXPECT_TRUE(wait_for(first->destroyed, milliseconds(2000)));
  EXPECT_TRUE(first->freed);
  EXPECT_TRUE(second->freed);
}

TEST_F(Teardown, AbortWithADeadPeerIsPromptAndFrees) {
  auto group = make_group(3);
  group[2].reset();  // died: no farewell, its connections end
  std::vector<std::shared_ptr<Record>> records{std::make_shared<Record>(), std::make_shared<Record>()};
  for (int r = 0; r < 2; ++r) {
    const auto start = Clock::now();
    retire(std::make_unique<FakeState>(records[r], true), group[r], Ending::kAbort);
    EXPECT_LT(Clock::now() - start, milliseconds(1000)) << "rank " << r;
  }
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(wait_for(records[r]->destroyed, milliseconds(1000))) << "rank " << r;
    EXPECT_TRUE(records[r]->freed) << "rank " << r;
    EXPECT_EQ(records[r]->list(), (std::vector<std::string>{"abort", "quiesce bounded", "release_private"}));
  }
}

TEST_F(Teardown, LaunchesThatDoNotEndKeepEverythingAndSayNoFarewell) {
  auto group = make_group(2);
  auto stuck = std::make_shared<Record>();
  const auto start = Clock::now();
  retire(std::make_unique<FakeState>(stuck, false), group[0], Ending::kAbort);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  EXPECT_TRUE(stuck->destroyed);
  EXPECT_FALSE(stuck->freed);
  EXPECT_EQ(stuck->list(), (std::vector<std::string>{"abort", "quiesce bounded", "leak"}));
  // Rank 0 may still read rank 1's memory: rank 1 hears no farewell from it.
  EXPECT_EQ(group[1]->await_farewells(milliseconds(300)), ncclRemoteError);
}

// ncclCommAbort from a watchdog thread while the application's thread waits in a bootstrap call
// of the same communicator: the abort does not wait for that call, and says no farewell.
TEST_F(Teardown, AbortWhileAnotherThreadHoldsTheBootstrapIsPrompt) {
  auto group = make_group(2);
  std::thread owner([&] {
    int x = 0;
    (void)group[0]->recv(1, 7, &x, sizeof(x));  // until rank 1 goes
  });
  std::this_thread::sleep_for(milliseconds(100));
  auto record = std::make_shared<Record>();
  const auto start = Clock::now();
  retire(std::make_unique<FakeState>(record, true), group[0], Ending::kAbort);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
  EXPECT_TRUE(record->destroyed);
  EXPECT_FALSE(record->freed);
  EXPECT_EQ(record->list(), (std::vector<std::string>{"abort", "quiesce bounded", "leak"}));
  group[1].reset();
  owner.join();
}

TEST_F(Teardown, APeerThatNeverLeavesKeepsTheBlockAllocated) {
  ::setenv("PURLIN_BOOTSTRAP_TIMEOUT", "1", 1);
  auto group = make_group(2);
  auto record = std::make_shared<Record>();
  retire(std::make_unique<FakeState>(record, true), group[0], Ending::kDestroy);
  EXPECT_TRUE(wait_for(record->destroyed, milliseconds(3000)));
  EXPECT_FALSE(record->freed);
  EXPECT_EQ(record->list(), (std::vector<std::string>{"quiesce", "release_private", "leak"}));
}

}  // namespace
}  // namespace purlin::runtime
