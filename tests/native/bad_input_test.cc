// Bad input on a native communicator: a clear error, and the communicator (and the CUDA context)
// still works afterwards. A host buffer handed to a GPU collective would otherwise make the
// kernel fault and poison every later CUDA call of the process.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.h"

namespace purlin::native_test {
namespace {

class BadInput : public GpuTest {};

TEST_F(BadInput, HostBufferIsRefusedAndTheCommunicatorStillWorks) {
  std::string error;
  std::unique_ptr<World> w = World::create(2, &error);
  ASSERT_TRUE(w) << error;
  for (int r = 0; r < 2; ++r) {
    int pageable = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, w->device(r)), cudaSuccess);
    if (pageable != 0) GTEST_SKIP() << "GPU " << w->device(r) << " reaches pageable host memory (HMM/ATS)";
  }

  std::vector<float> host(1024, 1.0f);
  float* dev[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) {
    const ScopedDevice on(w->device(r));
    ASSERT_EQ(cudaMalloc(&dev[r], host.size() * sizeof(float)), cudaSuccess);
  }

  // Host send buffer, then host receive buffer: refused at the call or at ncclGroupEnd.
  for (int which = 0; which < 2; ++which) {
    ncclResult_t calls[2] = {ncclSuccess, ncclSuccess};
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < 2; ++r) {
      const void* send = which == 0 ? static_cast<const void*>(host.data()) : dev[r];
      void* recv = which == 1 ? static_cast<void*>(host.data()) : dev[r];
      calls[r] = ncclAllReduce(send, recv, host.size(), ncclFloat32, ncclSum, w->comm(r), w->stream(r));
    }
    const ncclResult_t group = ncclGroupEnd();
    for (int r = 0; r < 2; ++r) {
      const ncclResult_t got = calls[r] != ncclSuccess ? calls[r] : group;
      EXPECT_EQ(got, ncclInvalidArgument) << (which == 0 ? "host sendbuff" : "host recvbuff") << ", rank " << r;
    }
  }

  // The communicator and the context are intact: a valid AllReduce gives the right sum.
  for (int r = 0; r < 2; ++r) {
    const ScopedDevice on(w->device(r));
    ASSERT_EQ(cudaMemcpy(dev[r], host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ncclAllReduce(dev[r], dev[r], host.size(), ncclFloat32, ncclSum, w->comm(r), w->stream(r)),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < 2; ++r) {
    const ScopedDevice on(w->device(r));
    ASSERT_EQ(cudaStreamSynchronize(w->stream(r)), cudaSuccess);
    std::vector<float> out(host.size());
    ASSERT_EQ(cudaMemcpy(out.data(), dev[r], out.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    for (float v : out) ASSERT_EQ(v, 2.0f);
  }
  for (float* p : dev) cudaFree(p);
}

// In place, an AllToAllV whose receive partitions are not its send partitions has no meaning:
// every rank refuses it (none launches, so none waits), and the world still works afterwards.
TEST_F(BadInput, InPlaceAllToAllVWithUnequalPartitionsIsRefused) {
  World* w = world(4);
  if (w == nullptr) return;
  CaseLog log;
  Case c;
  c.coll = Coll::kAllToAllV;
  c.type = ncclFloat32;
  c.count = 5;
  c.in_place = true;
  c.v_unequal = true;
  ASSERT_TRUE(log.run(w->runner(), c));
  c.v_unequal = false;  // equal partitions: runs in place and is checked
  ASSERT_TRUE(log.run(w->runner(), c));
  EXPECT_EQ(log.failures(), 0);
}

}  // namespace
}  // namespace purlin::native_test
