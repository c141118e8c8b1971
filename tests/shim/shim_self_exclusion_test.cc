// Purlin's libnccl.so.2 must never forward to itself. ctest runs each case in its own
// environment (see CMakeLists.txt): Purlin's directory first on LD_LIBRARY_PATH, a
// directory whose libnccl.so.2 is the fake after it.
#include <nccl.h>

#include <gtest/gtest.h>

#include "fake_nccl.h"
#include "fake_nccl_client.h"

namespace {

// No PURLIN_NCCL_LIBRARY: Purlin is already loaded and is the first libnccl.so.2 on the
// path, yet the version reported must be the fake's, found further down the path.
TEST(SelfExclusion, SearchSkipsPurlinItself) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, FAKE_NCCL_VERSION) << "Purlin did not forward to the fake found on LD_LIBRARY_PATH";
  EXPECT_TRUE(fake_nccl::Client(FAKE_NCCL_PATH).loaded());
}

// PURLIN_NCCL_LIBRARY names Purlin itself: refused, and the fake on the path is not a
// substitute for an explicit choice. Without a real NCCL, ncclGetVersion reports the
// version of the headers Purlin was built with, and forwarded calls fail cleanly.
TEST(SelfExclusion, ExplicitPathToPurlinIsRefused) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  EXPECT_FALSE(fake_nccl::Client(FAKE_NCCL_PATH).loaded()) << "the fake was loaded in spite of the explicit path";

  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
  static float buf[4];
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, nullptr), ncclSystemError);
  EXPECT_NE(std::string(ncclGetLastError(comm)).find("PURLIN_NCCL_LIBRARY"), std::string::npos)
      << ncclGetLastError(comm);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

}  // namespace
