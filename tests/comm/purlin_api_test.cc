// Purlin's own entry points (include/purlin/purlin.h) without a GPU or real NCCL. CI
// communicators have no GPU, so they are forwarded: the V collectives must refuse them
// cleanly (ncclInvalidUsage, one WARN), inside groups too, after checking their arguments
// against the calling rank. Also the lifecycle rules the native path added (finalize).
#include <gtest/gtest.h>

#include "common/warn_lines.h"
#include <nccl.h>
#include <purlin/purlin.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

using purlin::test::warn_lines;

// Runs `call`, expects `code` and exactly one WARN containing `text`.
template <class F>
void expect_refused(F&& call, ncclResult_t code, const std::string& text) {
  testing::internal::CaptureStderr();
  const ncclResult_t got = call();
  fflush(stderr);
  const std::string err = testing::internal::GetCapturedStderr();
  std::string first;
  EXPECT_EQ(got, code);
  EXPECT_EQ(warn_lines(err, &first), 1) << err;
  EXPECT_NE(first.find(text), std::string::npos) << first;
}

class PurlinApi : public ::testing::Test {
 protected:
  void SetUp() override {
    const int devs[2] = {0, 0};
    ASSERT_EQ(ncclCommInitAll(comms_, 2, devs), ncclSuccess);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) {
      if (c != nullptr) {
        EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
      }
    }
  }
  ncclComm_t comms_[2] = {nullptr, nullptr};
  float send_[64] = {};
  float recv_[64] = {};
};

TEST_F(PurlinApi, CiCommunicatorsAreNotNative) {
  for (ncclComm_t c : comms_) {
    int native = -1;
    ASSERT_EQ(purlinCommIsNative(c, &native), ncclSuccess);
    EXPECT_EQ(native, 0);
  }
}

TEST_F(PurlinApi, ValidVCallsOnAForwardedCommunicatorAreRefusedWithInvalidUsage) {
  const size_t counts[2] = {3, 5};
  const size_t sc[2] = {2, 4}, rc[2] = {2, 1};
  ncclComm_t c1 = comms_[1];
  expect_refused([&] { return purlinAllGatherV(send_, 5, recv_, counts, nullptr, ncclFloat32, c1, nullptr); },
                 ncclInvalidUsage, "purlinAllGatherV needs a native communicator");
  expect_refused(
      [&] { return purlinReduceScatterV(send_, counts, nullptr, recv_, 5, ncclFloat32, ncclMax, c1, nullptr); },
      ncclInvalidUsage, "purlinReduceScatterV needs a native communicator");
  expect_refused(
      [&] { return purlinAllToAllV(send_, sc, nullptr, recv_, rc, nullptr, 4, ncclFloat32, c1, nullptr); },
      ncclInvalidUsage, "purlinAllToAllV needs a native communicator");
}

// The per-rank checks use the caller's rank: rank 1's sendcount must equal recvcounts[1].
TEST_F(PurlinApi, RankLocalChecksUseTheCallersRank) {
  const size_t counts[2] = {3, 5};
  expect_refused([&] { return purlinAllGatherV(send_, 3, recv_, counts, nullptr, ncclFloat32, comms_[1], nullptr); },
                 ncclInvalidArgument, "recvcounts[1] = 5");
  expect_refused(
      [&] { return purlinReduceScatterV(send_, counts, nullptr, recv_, 5, ncclFloat32, ncclSum, comms_[0], nullptr); },
      ncclInvalidArgument, "sendcounts[0] = 3");
  // displs reaching past what the buffers can be checked for: only NULL-ness is checkable,
  // but an overflowing table is caught.
  const size_t far[2] = {0, SIZE_MAX - 2};
  expect_refused([&] { return purlinAllGatherV(send_, 5, recv_, counts, far, ncclFloat32, comms_[1], nullptr); },
                 ncclInvalidArgument, "overflow");
}

TEST_F(PurlinApi, ZeroCountsNeedNoBuffersButStillANativeCommunicator) {
  const size_t zeros[2] = {0, 0};
  expect_refused([&] { return purlinAllGatherV(nullptr, 0, nullptr, zeros, nullptr, ncclInt8, comms_[0], nullptr); },
                 ncclInvalidUsage, "native communicator");
  expect_refused(
      [&] { return purlinAllToAllV(nullptr, zeros, nullptr, nullptr, zeros, nullptr, 0, ncclInt8, comms_[0], nullptr); },
      ncclInvalidUsage, "native communicator");
}

// Inside a group the refusal comes at the call, as every argument error does, and nothing
// is left for ncclGroupEnd (which therefore needs no real NCCL here).
TEST_F(PurlinApi, RefusalInsideAGroupComesAtTheCallAndLeavesNothingDeferred) {
  const size_t counts[2] = {3, 5};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  expect_refused([&] { return purlinAllGatherV(send_, 3, recv_, counts, nullptr, ncclFloat32, comms_[0], nullptr); },
                 ncclInvalidUsage, "native communicator");
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
}

TEST_F(PurlinApi, AsyncErrorOfAForwardedCommunicatorStaysSuccess) {
  ncclResult_t async = ncclInternalError;
  ASSERT_EQ(ncclCommGetAsyncError(comms_[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
}

// After ncclCommFinalize only ncclCommDestroy may follow: communication is refused before
// any routing (a native communicator has freed its device state by then).
TEST_F(PurlinApi, CommunicationAfterFinalizeIsInvalidUsage) {
  std::vector<ncclResult_t> res(2, ncclInternalError);
  for (int r = 0; r < 2; ++r) res[r] = ncclCommFinalize(comms_[r]);
  EXPECT_EQ(res[0], ncclSuccess);
  EXPECT_EQ(res[1], ncclSuccess);
  expect_refused([&] { return ncclAllReduce(send_, recv_, 4, ncclFloat32, ncclSum, comms_[0], nullptr); },
                 ncclInvalidUsage, "finalized");
  const size_t counts[2] = {3, 5};
  expect_refused([&] { return purlinAllGatherV(send_, 3, recv_, counts, nullptr, ncclFloat32, comms_[0], nullptr); },
                 ncclInvalidUsage, "finalized");
}

}  // namespace
