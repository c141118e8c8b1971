// The shim's pure parts, linked directly (purlin_shim_core): V descriptors and their copied
// tables, the routing decision, and the user-operator table. No GPU, no NCCL library.
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "descriptor.h"
#include "launch/call.h"
#include "route.h"
#include "runtime/communicator.h"
#include "user_ops.h"

namespace purlin::shim {
namespace {

// ---- V descriptors ---------------------------------------------------------------------

Descriptor v_descriptor(OpKind kind, size_t count, std::shared_ptr<const VArrays> v) {
  Descriptor d{kind, reinterpret_cast<const void*>(0x1000), reinterpret_cast<void*>(0x2000), count, ncclFloat32,
               ncclSum, -1, nullptr, nullptr};
  d.v = std::move(v);
  return d;
}

TEST(VDescriptor, TablesAreCopiedNotReferenced) {
  std::vector<size_t> counts = {3, 0, 5}, displs = {10, 0, 20};
  auto v = copy_v_arrays(3, counts.data(), displs.data());
  counts.assign({99, 99, 99});  // the application reuses its arrays right after the call
  displs.assign({77, 77, 77});
  EXPECT_EQ(v->in_counts, (std::vector<size_t>{3, 0, 5}));
  EXPECT_EQ(v->in_displs, (std::vector<size_t>{10, 0, 20}));
  EXPECT_TRUE(v->out_counts.empty());
  EXPECT_TRUE(v->out_displs.empty());
  EXPECT_EQ(v->agreed_max, 5u) << "AllGatherV/ReduceScatterV agree on the largest shared count";
}

TEST(VDescriptor, NullDisplacementsStayEmptyMeaningBackToBack) {
  const size_t counts[2] = {4, 6};
  auto v = copy_v_arrays(2, counts, nullptr);
  EXPECT_TRUE(v->in_displs.empty());
  size_t extent = 0;
  ASSERT_TRUE(v_extent(v->in_counts, v->in_displs, &extent));
  EXPECT_EQ(extent, 10u);
}

TEST(VDescriptor, AllToAllVKeepsBothSidesAndTheCallersMaximum) {
  const size_t sc[3] = {1, 2, 3}, sd[3] = {0, 8, 16}, rc[3] = {4, 5, 6}, rd[3] = {30, 20, 10};
  auto v = copy_v_arrays(3, sc, sd, rc, rd, 42);
  EXPECT_EQ(v->in_counts, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(v->in_displs, (std::vector<size_t>{0, 8, 16}));
  EXPECT_EQ(v->out_counts, (std::vector<size_t>{4, 5, 6}));
  EXPECT_EQ(v->out_displs, (std::vector<size_t>{30, 20, 10}));
  EXPECT_EQ(v->agreed_max, 42u) << "maxcount is the caller's agreed value, not a local maximum";
}

// Group deferral keeps copies of the descriptor (group.cc: defer_op) and issues them at
// ncclGroupEnd, after the application's arrays and its own descriptor are gone.
TEST(VDescriptor, TablesSurviveGroupDeferral) {
  std::vector<Descriptor> deferred;
  {
    auto counts = std::make_unique<std::vector<size_t>>(std::vector<size_t>{7, 1, 2, 9});
    auto displs = std::make_unique<std::vector<size_t>>(std::vector<size_t>{100, 0, 50, 60});
    Descriptor d = v_descriptor(OpKind::kReduceScatterV, 1,
                                copy_v_arrays(4, counts->data(), displs->data()));
    deferred.push_back(d);
    std::fill(counts->begin(), counts->end(), 0);
    counts.reset();
    displs.reset();
  }  // the original descriptor is gone too
  ASSERT_EQ(deferred.size(), 1u);
  ASSERT_NE(deferred[0].v, nullptr);
  EXPECT_EQ(deferred[0].v->in_counts, (std::vector<size_t>{7, 1, 2, 9}));
  EXPECT_EQ(deferred[0].v->in_displs, (std::vector<size_t>{100, 0, 50, 60}));
  EXPECT_EQ(deferred[0].v.use_count(), 1) << "the deferred copy alone owns the tables";
}

TEST(VDescriptor, BufferUseOfEachVKind) {
  const size_t counts[3] = {2, 0, 3}, displs[3] = {10, 500, 0};  // rank 1's empty partition lies far out
  BufferUse use{};
  ASSERT_TRUE(buffer_use(v_descriptor(OpKind::kAllGatherV, 2, copy_v_arrays(3, counts, displs)), 0, 3, &use));
  EXPECT_EQ(use.send_elems, 2u);
  EXPECT_EQ(use.recv_elems, 12u) << "furthest non-empty partition ends at 10 + 2";
  EXPECT_FALSE(use.reduces);
  EXPECT_FALSE(use.has_root);

  ASSERT_TRUE(buffer_use(v_descriptor(OpKind::kReduceScatterV, 3, copy_v_arrays(3, counts, nullptr)), 2, 3, &use));
  EXPECT_EQ(use.send_elems, 5u);
  EXPECT_EQ(use.recv_elems, 3u);
  EXPECT_TRUE(use.reduces);

  const size_t rc[3] = {1, 1, 1};
  ASSERT_TRUE(buffer_use(v_descriptor(OpKind::kAllToAllV, 0, copy_v_arrays(3, counts, displs, rc, nullptr, 3)), 0,
                         3, &use));
  EXPECT_EQ(use.send_elems, 12u);
  EXPECT_EQ(use.recv_elems, 3u);
}

TEST(VDescriptor, OverflowingTablesAndMissingTablesAreRejected) {
  const size_t counts[2] = {SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1};
  BufferUse use{};
  EXPECT_FALSE(buffer_use(v_descriptor(OpKind::kAllGatherV, 1, copy_v_arrays(2, counts, nullptr)), 0, 2, &use));
  const size_t one[2] = {1, 8}, far[2] = {0, SIZE_MAX - 4};
  EXPECT_FALSE(buffer_use(v_descriptor(OpKind::kAllGatherV, 1, copy_v_arrays(2, one, far)), 0, 2, &use));
  EXPECT_FALSE(buffer_use(v_descriptor(OpKind::kAllGatherV, 1, nullptr), 0, 2, &use));
}

TEST(VDescriptor, KindsAndNames) {
  EXPECT_STREQ(op_kind_name(OpKind::kAllGatherV), "purlinAllGatherV");
  EXPECT_STREQ(op_kind_name(OpKind::kReduceScatterV), "purlinReduceScatterV");
  EXPECT_STREQ(op_kind_name(OpKind::kAllToAllV), "purlinAllToAllV");
  for (OpKind k : {OpKind::kAllGatherV, OpKind::kReduceScatterV, OpKind::kAllToAllV}) {
    EXPECT_TRUE(is_v(k));
    EXPECT_TRUE(runs_native(k));
  }
  for (OpKind k : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter, OpKind::kAllToAll,
                   OpKind::kBroadcast, OpKind::kReduce, OpKind::kGather, OpKind::kScatter}) {
    EXPECT_FALSE(is_v(k));
    EXPECT_TRUE(runs_native(k)) << op_kind_name(k);
  }
  EXPECT_TRUE(runs_native(OpKind::kSend));
  EXPECT_TRUE(runs_native(OpKind::kRecv));
}

// ---- Routing ---------------------------------------------------------------------------

runtime::PeerInfo peer(int device) {
  runtime::PeerInfo p;
  p.host_hash = 0xfeed;
  p.cuda_device = device;
  return p;
}

TEST(Route, NativeOnlyWhenEveryConditionHolds) {
  std::string why;
  RouteFacts ok{1, true, -1, 8};
  EXPECT_EQ(decide_route(ok, &why), Route::kNative);
  EXPECT_NE(why.find("Purlin's kernels"), std::string::npos) << why;

  RouteFacts off = ok;
  off.native_env = 0;
  EXPECT_EQ(decide_route(off, &why), Route::kForward);
  EXPECT_NE(why.find("PURLIN_NATIVE=0"), std::string::npos) << why;

  RouteFacts hosts = ok;
  hosts.single_host = false;
  EXPECT_EQ(decide_route(hosts, &why), Route::kForward);
  EXPECT_NE(why.find("several hosts"), std::string::npos) << why;

  RouteFacts no_gpu = ok;
  no_gpu.first_rank_without_gpu = 3;
  EXPECT_EQ(decide_route(no_gpu, &why), Route::kForward);
  EXPECT_NE(why.find("rank 3 has no GPU"), std::string::npos) << why;

  RouteFacts big = ok;
  big.nranks = launch::kMaxRanks + 1;
  EXPECT_EQ(decide_route(big, &why), Route::kForward);
  EXPECT_NE(why.find(std::to_string(launch::kMaxRanks)), std::string::npos) << why;

  RouteFacts limit = ok;
  limit.nranks = launch::kMaxRanks;
  EXPECT_EQ(decide_route(limit, &why), Route::kNative);
}

TEST(Route, AnyNonZeroEnvironmentValueKeepsNativeOn) {
  std::string why;
  for (std::int64_t v : {1, 2, -1})
    EXPECT_EQ(decide_route(RouteFacts{v, true, -1, 2}, &why), Route::kNative) << v;
}

TEST(Route, FactsComeFromThePeerTableOnly) {
  std::vector<runtime::PeerInfo> peers = {peer(0), peer(1), peer(-1), peer(-1)};
  RouteFacts f = route_facts(1, true, peers);
  EXPECT_EQ(f.nranks, 4);
  EXPECT_EQ(f.first_rank_without_gpu, 2);
  EXPECT_TRUE(f.single_host);
  EXPECT_EQ(f.native_env, 1);

  // Several ranks on one GPU are fine: each has a device.
  f = route_facts(1, true, {peer(0), peer(0), peer(0)});
  EXPECT_EQ(f.first_rank_without_gpu, -1);
  std::string why;
  EXPECT_EQ(decide_route(f, &why), Route::kNative);

  // CI: no rank has a GPU, so CI communicators stay forwarded.
  f = route_facts(1, true, {peer(-1), peer(-1)});
  EXPECT_EQ(f.first_rank_without_gpu, 0);
  EXPECT_EQ(decide_route(f, &why), Route::kForward);

  f = route_facts(0, false, {peer(0)});
  EXPECT_EQ(f.native_env, 0);
  EXPECT_FALSE(f.single_host);
}

// ---- Routing over fake topologies: native only where every pair of ranks' GPUs is one GPU
// or NVLink peers -----------------------------------------------------------------------------

constexpr const char* kBus[] = {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0"};

// A rank on host 0xfeed, in process `pid`, driving GPU `gpu` (an index into kBus).
runtime::PeerInfo on_gpu(int gpu, std::int64_t pid) {
  runtime::PeerInfo p = peer(gpu);
  p.pid = pid;
  std::snprintf(p.pci_bus_id, sizeof(p.pci_bus_id), "%s", kBus[gpu]);
  return p;
}

// What `p`'s process observes of GPU `gpu` from its own GPU.
void sees(runtime::PeerInfo* p, int gpu, bool access, bool atomics) {
  for (runtime::GpuLink& link : p->links) {
    if (link.pci_bus_id[0] != '\0') continue;
    std::snprintf(link.pci_bus_id, sizeof(link.pci_bus_id), "%s", kBus[gpu]);
    link.peer_access = access;
    link.native_atomics = atomics;
    return;
  }
  FAIL() << "no free link slot";
}

// Ranks 0..n-1 on GPUs 0..n-1, one process each, every process seeing every GPU, each
// pair linked as `link(a, b)` says.
template <class Link>
std::vector<runtime::PeerInfo> gpus(int n, Link link) {
  std::vector<runtime::PeerInfo> peers;
  for (int r = 0; r < n; ++r) peers.push_back(on_gpu(r, 100 + r));
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) {
        const GpuPair p = link(std::min(a, b), std::max(a, b));
        sees(&peers[a], b, p != GpuPair::kNoPeerAccess, p == GpuPair::kNvlink);
      }
  return peers;
}

Route route_of(const std::vector<runtime::PeerInfo>& peers, std::string* why) {
  return decide_route(route_facts(1, true, peers), why);
}

TEST(RouteTopology, RanksSharingOneGpuRunNative) {
  // Four processes on one GPU (MPS), none of which sees another GPU.
  std::vector<runtime::PeerInfo> peers = {on_gpu(2, 10), on_gpu(2, 11), on_gpu(2, 12), on_gpu(2, 13)};
  EXPECT_EQ(gpu_pair(peers[0], peers[3]), GpuPair::kSameGpu);
  std::string why;
  EXPECT_EQ(route_of(peers, &why), Route::kNative) << why;
}

TEST(RouteTopology, NvlinkPeersRunNative) {
  auto peers = gpus(4, [](int, int) { return GpuPair::kNvlink; });
  EXPECT_EQ(gpu_pair(peers[0], peers[1]), GpuPair::kNvlink);
  std::string why;
  EXPECT_EQ(route_of(peers, &why), Route::kNative) << why;
  EXPECT_NE(why.find("NVLink"), std::string::npos) << why;

  // Two ranks per GPU on two NVLink peers, a second rank in each process (which observes
  // what the first one does).
  peers = gpus(2, [](int, int) { return GpuPair::kNvlink; });
  const std::vector<runtime::PeerInfo> firsts = peers;
  peers.insert(peers.end(), firsts.begin(), firsts.end());
  EXPECT_EQ(route_of(peers, &why), Route::kNative) << why;
}

TEST(RouteTopology, APairWithoutPeerAccessForwardsAndIsNamed) {
  // GPUs 1 and 2 have no P2P (other PCIe root complexes, or P2P disabled); all else NVLink.
  auto peers = gpus(4, [](int a, int b) { return a == 1 && b == 2 ? GpuPair::kNoPeerAccess : GpuPair::kNvlink; });
  EXPECT_EQ(gpu_pair(peers[1], peers[2]), GpuPair::kNoPeerAccess);
  const RouteFacts f = route_facts(1, true, peers);
  EXPECT_EQ(f.pair_a, 1);
  EXPECT_EQ(f.pair_b, 2);
  std::string why;
  EXPECT_EQ(decide_route(f, &why), Route::kForward);
  EXPECT_NE(why.find("ranks 1 and 2 have no peer access"), std::string::npos) << why;
}

TEST(RouteTopology, PcieOnlyPeerAccessForwards) {
  auto peers = gpus(2, [](int, int) { return GpuPair::kPcieOnly; });
  EXPECT_EQ(gpu_pair(peers[0], peers[1]), GpuPair::kPcieOnly);
  std::string why;
  EXPECT_EQ(route_of(peers, &why), Route::kForward);
  EXPECT_NE(why.find("ranks 0 and 1 reach each other's GPU over PCIe only"), std::string::npos) << why;
}

TEST(RouteTopology, MixedHostsForward) {
  auto peers = gpus(2, [](int, int) { return GpuPair::kNvlink; });
  peers[1].host_hash = 0xbeef;
  std::string why;
  EXPECT_EQ(decide_route(route_facts(1, false, peers), &why), Route::kForward);
  EXPECT_NE(why.find("several hosts"), std::string::npos) << why;
}

TEST(RouteTopology, OneRanksObservationServesBothDirections) {
  // CUDA_VISIBLE_DEVICES hides GPU 0 from rank 1's process; rank 0 sees GPU 1 over NVLink.
  std::vector<runtime::PeerInfo> peers = {on_gpu(0, 100), on_gpu(1, 101)};
  sees(&peers[0], 1, true, true);
  EXPECT_EQ(gpu_pair(peers[0], peers[1]), GpuPair::kNvlink);
  EXPECT_EQ(gpu_pair(peers[1], peers[0]), GpuPair::kNvlink);
  // When both observed, the weaker answer counts.
  sees(&peers[1], 0, true, false);
  EXPECT_EQ(gpu_pair(peers[0], peers[1]), GpuPair::kPcieOnly);
}

TEST(RouteTopology, UnobservablePairsForward) {
  // Each process sees only its own GPU: nobody can vouch for peer access.
  std::vector<runtime::PeerInfo> peers = {on_gpu(0, 100), on_gpu(1, 101)};
  EXPECT_EQ(gpu_pair(peers[0], peers[1]), GpuPair::kUnknown);
  std::string why;
  EXPECT_EQ(route_of(peers, &why), Route::kForward);
  EXPECT_NE(why.find("ranks 0 and 1: peer access between their GPUs is unknown"), std::string::npos) << why;

  // Without bus ids, ranks of one process on different device numbers cannot be looked up.
  runtime::PeerInfo a = peer(0), b = peer(1);
  EXPECT_EQ(gpu_pair(a, b), GpuPair::kUnknown);
  EXPECT_EQ(gpu_pair(a, peer(0)), GpuPair::kSameGpu);
}

TEST(RouteTopology, TheFirstFailingPairInRankOrderIsReported) {
  auto peers = gpus(4, [](int a, int b) {
    if (a == 0 && b == 3) return GpuPair::kPcieOnly;
    if (a == 2 && b == 3) return GpuPair::kNoPeerAccess;
    return GpuPair::kNvlink;
  });
  const RouteFacts f = route_facts(1, true, peers);
  EXPECT_EQ(f.pair_a, 0);
  EXPECT_EQ(f.pair_b, 3);
  EXPECT_EQ(f.pair, GpuPair::kPcieOnly);
  // An earlier fact decides first: a rank without a GPU is named, not a pair.
  peers[3].cuda_device = -1;
  std::string why;
  EXPECT_EQ(decide_route(route_facts(1, true, peers), &why), Route::kForward);
  EXPECT_NE(why.find("rank 3 has no GPU"), std::string::npos) << why;
}

// ---- User operators --------------------------------------------------------------------

TEST(UserOps, IdsStartAtNumOpsAndTheLowestFreeOneIsReused) {
  UserOps ops;
  float s = 1.0f;
  auto a = ops.create(&s, ncclFloat32, 4, ncclScalarHostImmediate);
  auto b = ops.create(&s, ncclFloat32, 4, ncclScalarHostImmediate);
  auto c = ops.create(&s, ncclFloat32, 4, ncclScalarHostImmediate);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(static_cast<int>(*a), ncclNumOps);
  EXPECT_EQ(static_cast<int>(*b), ncclNumOps + 1);
  EXPECT_EQ(static_cast<int>(*c), ncclNumOps + 2);
  EXPECT_TRUE(ops.erase(*b));
  EXPECT_FALSE(ops.erase(*b)) << "destroyed twice";
  auto d = ops.create(&s, ncclFloat32, 4, ncclScalarHostImmediate);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, *b) << "ranks that create and destroy alike agree on ids";
  EXPECT_EQ(ops.size(), 3u);
}

TEST(UserOps, HostScalarIsCopiedAtCreation) {
  UserOps ops;
  double scalar = -0.75;
  auto id = ops.create(&scalar, ncclFloat64, 8, ncclScalarHostImmediate);
  ASSERT_TRUE(id);
  scalar = 123.0;  // NCCL lets the application change or free its variable right away
  auto op = ops.find(*id);
  ASSERT_TRUE(op);
  double back = 0;
  std::memcpy(&back, &op->scalar_bits, sizeof(back));
  EXPECT_EQ(back, -0.75);
  EXPECT_EQ(op->type, ncclFloat64);
  EXPECT_EQ(op->residence, ncclScalarHostImmediate);
  EXPECT_EQ(op->scalar_device, nullptr);
}

TEST(UserOps, NarrowHostScalarFillsOnlyTheLowBytes) {
  UserOps ops;
  const std::uint16_t half_bits = 0x3c00;  // 1.0 in fp16
  auto id = ops.create(&half_bits, ncclFloat16, 2, ncclScalarHostImmediate);
  ASSERT_TRUE(id);
  EXPECT_EQ(ops.find(*id)->scalar_bits, 0x3c00u);
}

TEST(UserOps, DeviceScalarKeepsItsAddress) {
  UserOps ops;
  const void* device_ptr = reinterpret_cast<const void*>(0xdead0000);
  auto id = ops.create(device_ptr, ncclBfloat16, 2, ncclScalarDevice);
  ASSERT_TRUE(id);
  auto op = ops.find(*id);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->scalar_device, device_ptr);
  EXPECT_EQ(op->scalar_bits, 0u) << "a device scalar is never read on the host";
  EXPECT_EQ(op->type, ncclBfloat16);
}

TEST(UserOps, RecordedRealOperatorsAreFoundAndErased) {
  UserOps ops;
  const auto real_id = static_cast<ncclRedOp_t>(ncclNumOps + 17);
  EXPECT_FALSE(ops.find(real_id));
  ops.record(real_id, ncclInt32, ncclScalarDevice);
  auto op = ops.find(real_id);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->type, ncclInt32);
  EXPECT_EQ(op->residence, ncclScalarDevice);
  EXPECT_FALSE(ops.find(ncclSum)) << "built-in operators are not in the table";
  EXPECT_TRUE(ops.erase(real_id));
  EXPECT_FALSE(ops.find(real_id));
}

}  // namespace
}  // namespace purlin::shim
