// The bridge's dispatch tables, without a GPU: every (collective, type, op) maps to the kernel
// instance of that collective, element and op; copies share one byte kernel per collective;
// nothing in range is missing and nothing out of range is found. Also the bridge's own
// verdicts, which are given before any CUDA call.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>

#include "launch/args.h"
#include "launch/bridge.h"
#include "launch/instances.h"

namespace purlin::launch {
namespace {

TEST(LaunchTable, EveryCombinationHasItsKernel) {
  std::set<const void*> functions;
  std::set<const void*> copy_functions;
  int reduce_collectives = 0;
  for (int c = 0; c < kCollectives; ++c) {
    const auto collective = static_cast<Collective>(c);
    reduce_collectives += reduces(collective) ? 1 : 0;
    for (int t = 0; t < kElementTypes; ++t) {
      for (int o = 0; o < kReduceOps; ++o) {
        const Kernel* k = find_kernel(collective, t, o);
        ASSERT_NE(k, nullptr) << c << " " << t << " " << o;
        EXPECT_NE(k->launch, nullptr);
        EXPECT_NE(k->workers, nullptr);
        ASSERT_NE(k->function, nullptr);
        EXPECT_EQ(k->collective, collective);
        if (reduces(collective)) {
          EXPECT_EQ(static_cast<std::size_t>(k->element_bytes), element_bytes(t)) << c << " " << t;
          EXPECT_EQ(k->op, o);
        } else {
          EXPECT_EQ(k->element_bytes, 1);
          EXPECT_EQ(k->op, -1);
          // One kernel per copy collective, whatever the type and op.
          EXPECT_EQ(k, find_kernel(collective, 0, 0));
          copy_functions.insert(k->function);
        }
        functions.insert(k->function);
      }
    }
  }
  EXPECT_EQ(reduce_collectives, 4);
  EXPECT_EQ(copy_functions.size(), 7u);
  EXPECT_EQ(functions.size(), 7u + 4u * kElementTypes * kReduceOps);  // 295 distinct kernels
}

TEST(LaunchTable, ReductionsAreTheDeclarationsThatReduce) {
  EXPECT_TRUE(reduces(Collective::all_reduce));
  EXPECT_TRUE(reduces(Collective::reduce));
  EXPECT_TRUE(reduces(Collective::reduce_scatter));
  EXPECT_TRUE(reduces(Collective::reduce_scatter_v));
  EXPECT_FALSE(reduces(Collective::broadcast));
  EXPECT_FALSE(reduces(Collective::all_to_all_v));
}

TEST(LaunchTable, OutOfRangeFindsNothing) {
  EXPECT_EQ(find_kernel(Collective::all_reduce, -1, 0), nullptr);
  EXPECT_EQ(find_kernel(Collective::all_reduce, kElementTypes, 0), nullptr);
  EXPECT_EQ(find_kernel(Collective::all_reduce, 0, kReduceOps), nullptr);
  EXPECT_EQ(find_kernel(Collective::all_reduce, 0, -1), nullptr);
  EXPECT_EQ(find_kernel(static_cast<Collective>(kCollectives), 0, 0), nullptr);
  EXPECT_EQ(find_kernel(Collective::all_gather, kElementTypes, 0), nullptr);
  EXPECT_NE(find_kernel(Collective::all_gather, 0, kReduceOps), nullptr);  // copies ignore op
}

snac::Handle handle(int rank, int ranks) {
  snac::Handle h;
  h.rank = rank;
  h.ranks = ranks;
  h.staging_bytes = std::size_t{8} << 20;
  h.slots = 16;
  h.epoch_slots = 16;
  return h;
}

TEST(LaunchBridge, RefusesBeforeTouchingTheGpu) {
  const snac::Policy policy;
  const snac::DeviceControl control;
  const KernelSmem smem;
  std::byte buffer[64];
  Call call;
  call.collective = Collective::all_reduce;
  call.type = 7;
  call.count = 4;
  call.input = buffer;
  call.output = buffer;

  Call bad = call;
  bad.type = 12;
  Result r = launch(handle(0, 2), control, policy, smem, bad);
  EXPECT_EQ(r.status, snac::Status::bad_argument);
  EXPECT_STREQ(r.what, "type");

  bad = call;
  bad.op = kReduceOps;
  EXPECT_STREQ(launch(handle(0, 2), control, policy, smem, bad).what, "op");

  bad = call;
  bad.collective = static_cast<Collective>(kCollectives);
  EXPECT_STREQ(launch(handle(0, 2), control, policy, smem, bad).what, "collective");

  r = launch(handle(0, kMaxRanks + 1), control, policy, smem, call);
  EXPECT_EQ(r.status, snac::Status::bad_argument);
  EXPECT_STREQ(r.what, "ranks");
  EXPECT_EQ(r.cuda, cudaSuccess);
}

TEST(LaunchBridge, WorkersFollowThePlan) {
  const snac::Policy policy;
  std::byte buffer[64];
  Call call;
  call.collective = Collective::all_reduce;
  call.type = 9;
  call.op = kPreMulSum;
  call.count = 16;
  call.input = buffer;
  call.output = buffer;
  const snac::Roles& t = policy.throughput;
  EXPECT_EQ(workers(handle(0, 2), policy, call), t.stagers + t.consumers + t.finishers);

  call.collective = Collective::all_gather;
  EXPECT_EQ(workers(handle(0, 2), policy, call), t.stagers + t.consumers);

  call.type = -1;
  EXPECT_EQ(workers(handle(0, 2), policy, call), 0);
}

}  // namespace
}  // namespace purlin::launch
