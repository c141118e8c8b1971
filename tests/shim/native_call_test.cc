// The native path's translations (nccl_shim/native_call.h), linked directly: a Descriptor
// into the launch bridge's Call (count semantics of launch/call.h, op indices, V tables,
// PreMulSum scalars) and the bridge's Result into an NCCL result with one WARN.
#include <gtest/gtest.h>

#include "common/warn_lines.h"
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "descriptor.h"
#include "launch/bridge.h"
#include "launch/call.h"
#include "native_call.h"

namespace purlin::shim {
namespace {

using launch::Collective;

Descriptor make(OpKind kind, size_t count, ncclRedOp_t op = ncclSum, int root = -1) {
  return Descriptor{kind,   reinterpret_cast<const void*>(0x1100), reinterpret_cast<void*>(0x2200), count,
                    ncclBfloat16, op, root, nullptr, reinterpret_cast<cudaStream_t>(0x77)};
}

TEST(ToCall, EveryNativeKindMapsToItsDeclaration) {
  const std::vector<std::pair<OpKind, Collective>> map = {
      {OpKind::kAllReduce, Collective::all_reduce},         {OpKind::kAllGather, Collective::all_gather},
      {OpKind::kReduceScatter, Collective::reduce_scatter}, {OpKind::kAllToAll, Collective::all_to_all},
      {OpKind::kBroadcast, Collective::broadcast},          {OpKind::kReduce, Collective::reduce},
      {OpKind::kGather, Collective::gather},                {OpKind::kScatter, Collective::scatter},
      {OpKind::kAllGatherV, Collective::all_gather_v},      {OpKind::kReduceScatterV, Collective::reduce_scatter_v},
      {OpKind::kAllToAllV, Collective::all_to_all_v},
  };
  for (const auto& [kind, collective] : map) {
    Descriptor d = make(kind, 13);
    if (is_v(kind)) {
      const size_t counts[2] = {13, 13};
      d.v = copy_v_arrays(2, counts, nullptr, kind == OpKind::kAllToAllV ? counts : nullptr, nullptr, 13);
    }
    EXPECT_EQ(to_call(d).collective, collective) << op_kind_name(kind);
  }
}

// One rank in place moves nothing, so the router launches nothing; out of place, with more
// ranks, for a V collective (its displacements may move the data) or with a PreMulSum
// operator (it scales) the call runs.
TEST(MovesNothing, OnlyOneRankInPlaceWithABuiltInOp) {
  for (OpKind kind : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter, OpKind::kAllToAll,
                      OpKind::kBroadcast, OpKind::kReduce, OpKind::kGather, OpKind::kScatter}) {
    Descriptor d = make(kind, 1001, ncclMax, 0);
    EXPECT_FALSE(moves_nothing(d, 1)) << op_kind_name(kind) << " out of place";
    d.recvbuff = const_cast<void*>(d.sendbuff);
    EXPECT_TRUE(moves_nothing(d, 1)) << op_kind_name(kind);
    EXPECT_FALSE(moves_nothing(d, 2)) << op_kind_name(kind) << " on two ranks";
    Descriptor configured = d;  // its config may ask for a launch-completion event
    configured.coll = std::make_shared<const ncclCollConfig_t>(ncclCollConfig_t NCCL_COLLCONFIG_INITIALIZER);
    EXPECT_FALSE(moves_nothing(configured, 1)) << op_kind_name(kind) << " with a config";
    d.op = static_cast<ncclRedOp_t>(ncclNumOps);  // the first user operator
    EXPECT_FALSE(moves_nothing(d, 1)) << op_kind_name(kind) << " with PreMulSum";
  }
  for (OpKind kind : {OpKind::kAllGatherV, OpKind::kReduceScatterV, OpKind::kAllToAllV}) {
    Descriptor d = make(kind, 13);
    d.recvbuff = const_cast<void*>(d.sendbuff);
    EXPECT_FALSE(moves_nothing(d, 1)) << op_kind_name(kind);
  }
}

// NCCL's count is call.h's count for every fixed collective: per rank for AllGather,
// ReduceScatter, AllToAll, Gather, Scatter; the whole buffer for AllReduce, Broadcast, Reduce.
TEST(ToCall, BuffersCountTypeStreamAndRootPassThrough) {
  for (OpKind kind : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter, OpKind::kAllToAll,
                      OpKind::kBroadcast, OpKind::kReduce, OpKind::kGather, OpKind::kScatter}) {
    const bool rooted = kind == OpKind::kBroadcast || kind == OpKind::kReduce || kind == OpKind::kGather ||
                        kind == OpKind::kScatter;
    const launch::Call c = to_call(make(kind, 1001, ncclSum, rooted ? 3 : -1));
    EXPECT_EQ(c.count, 1001u) << op_kind_name(kind);
    EXPECT_EQ(c.type, static_cast<int>(ncclBfloat16));
    EXPECT_EQ(c.input, reinterpret_cast<const void*>(0x1100));
    EXPECT_EQ(c.output, reinterpret_cast<void*>(0x2200));
    EXPECT_EQ(c.stream, reinterpret_cast<cudaStream_t>(0x77));
    EXPECT_EQ(c.root, rooted ? 3 : 0) << "unrooted calls carry root -1, the bridge wants a rank";
    EXPECT_EQ(c.in.counts, nullptr);
    EXPECT_EQ(c.out.counts, nullptr);
  }
}

TEST(ToCall, BuiltInOpsKeepTheirIndex) {
  const std::vector<std::pair<ncclRedOp_t, int>> ops = {{ncclSum, 0}, {ncclProd, 1}, {ncclMax, 2}, {ncclMin, 3},
                                                         {ncclAvg, 4}};
  for (const auto& [op, index] : ops) {
    const launch::Call c = to_call(make(OpKind::kAllReduce, 8, op));
    EXPECT_EQ(c.op, index);
    EXPECT_EQ(c.scalar_bits, 0u);
    EXPECT_EQ(c.scalar_device, nullptr);
  }
}

TEST(ToCall, UserOperatorIsPreMulSumWithTheResolvedScalar) {
  Descriptor host = make(OpKind::kReduce, 8, static_cast<ncclRedOp_t>(ncclNumOps + 2), 1);
  host.scalar_bits = 0x3fe0000000000000ull;  // 0.5 as a double
  launch::Call c = to_call(host);
  EXPECT_EQ(c.op, launch::kPreMulSum);
  EXPECT_EQ(c.scalar_bits, 0x3fe0000000000000ull);
  EXPECT_EQ(c.scalar_device, nullptr);

  Descriptor device = make(OpKind::kReduceScatterV, 8, static_cast<ncclRedOp_t>(ncclNumOps));
  const size_t counts[1] = {8};
  device.v = copy_v_arrays(1, counts, nullptr);
  device.scalar_device = reinterpret_cast<const void*>(0xd0d0);
  c = to_call(device);
  EXPECT_EQ(c.op, launch::kPreMulSum);
  EXPECT_EQ(c.scalar_device, reinterpret_cast<const void*>(0xd0d0));
}

TEST(ToCall, VTablesPointIntoTheDescriptorsCopies) {
  const size_t sc[3] = {1, 0, 4}, sd[3] = {0, 9, 2}, rc[3] = {5, 6, 7};
  Descriptor d = make(OpKind::kAllToAllV, 0);
  d.v = copy_v_arrays(3, sc, sd, rc, nullptr, 11);
  launch::Call c = to_call(d);
  EXPECT_EQ(c.in.counts, d.v->in_counts.data());
  EXPECT_EQ(c.in.displs, d.v->in_displs.data());
  EXPECT_EQ(c.out.counts, d.v->out_counts.data());
  EXPECT_EQ(c.out.displs, nullptr) << "no rdispls: back to back";
  EXPECT_EQ(c.agreed_max, 11u);
  EXPECT_EQ(c.in.counts[2], 4u);
  EXPECT_EQ(c.out.counts[1], 6u);

  Descriptor g = make(OpKind::kAllGatherV, 4);
  const size_t gc[2] = {4, 9};
  g.v = copy_v_arrays(2, gc, nullptr);
  c = to_call(g);
  EXPECT_EQ(c.in.counts, g.v->in_counts.data());
  EXPECT_EQ(c.in.displs, nullptr);
  EXPECT_EQ(c.out.counts, nullptr);
  EXPECT_EQ(c.agreed_max, 9u);
}

// ---- Results ---------------------------------------------------------------------------

using purlin::test::warn_lines;

struct ResultCase {
  launch::Result result;
  ncclResult_t expected;
  const char* text;  // the WARN must contain it
};

TEST(LaunchResult, EachFailureMapsToItsNcclResultWithOneWarn) {
  const std::vector<ResultCase> cases = {
      {{snac::Status::bad_argument, cudaSuccess, "root"}, ncclInvalidArgument, "root"},
      {{snac::Status::staging_too_small, cudaSuccess, ""}, ncclInvalidUsage, "staging too small"},
      {{snac::Status::too_many_workers, cudaSuccess, ""}, ncclInvalidUsage, snac::to_string(snac::Status::too_many_workers)},
      {{snac::Status::bad_policy, cudaSuccess, "roles"}, ncclInvalidUsage, "roles"},
      {{snac::Status::ok, cudaErrorLaunchOutOfResources, ""}, ncclUnhandledCudaError,
       cudaGetErrorString(cudaErrorLaunchOutOfResources)},
  };
  for (const ResultCase& k : cases) {
    testing::internal::CaptureStderr();
    const ncclResult_t got = launch_result("ncclAllReduce", k.result);
    fflush(stderr);
    const std::string err = testing::internal::GetCapturedStderr();
    std::string first;
    EXPECT_EQ(got, k.expected) << k.text;
    EXPECT_EQ(warn_lines(err, &first), 1) << err;
    EXPECT_NE(first.find(k.text), std::string::npos) << first;
    EXPECT_NE(first.find("ncclAllReduce"), std::string::npos) << first;
  }
}

TEST(LaunchResult, SuccessIsSilent) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(launch_result("ncclAllReduce", launch::Result{}), ncclSuccess);
  fflush(stderr);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace purlin::shim
