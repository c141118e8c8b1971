// Where ranks run decides how they reach each other and which memory scope the kernels use.
// The CI machine has no GPU, let alone several, so the placements of a multi-GPU host (one
// process driving 8 GPUs as nccl-tests -g 8 does, a process per GPU, MPS) are checked here on
// the records the ranks would exchange.
#include "runtime/placement.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace purlin::runtime {
namespace {

struct Rank {
  std::uint64_t process;
  int device;
};

std::vector<PeerRecord> records_of(const std::vector<Rank>& ranks) {
  std::vector<PeerRecord> out;
  for (const Rank& r : ranks) {
    PeerRecord p;
    p.token = r.process;
    p.device = r.device;
    p.ok = 1;
    p.exported = 1;
    p.sm_major = 9;
    p.sm_count = 132;
    p.ranks_on_gpu = 0;
    out.push_back(p);
  }
  for (PeerRecord& p : out) {  // as Communicator counts them: every rank on the same GPU
    for (const Rank& r : ranks) p.ranks_on_gpu += r.device == p.device ? 1 : 0;
  }
  return out;
}

TEST(Placement, EightRanksOfOneProcessOnOneGpuShareAddressesAndGpuScope) {
  const auto records = records_of(std::vector<Rank>(8, Rank{7, 0}));
  EXPECT_TRUE(one_address_space_and_gpu(records));
  for (std::size_t a = 0; a < records.size(); ++a) {
    for (std::size_t b = 0; b < records.size(); ++b) {
      EXPECT_EQ(reach(records[a], records[b]), PeerReach::own_pointer) << a << " -> " << b;
    }
    const GpuShare share = process_share_of_gpu(records, static_cast<int>(a));
    EXPECT_EQ(share.ranks, 8);
    EXPECT_EQ(share.first, 0);  // rank 0 alone speaks for the GPU's queues
  }
  EXPECT_EQ(agreed_facts(records).ranks_on_gpu, 8);
}

TEST(Placement, OneProcessDrivingEightGpusUsesPeerAccessAndSystemScope) {
  std::vector<Rank> ranks;
  for (int d = 0; d < 8; ++d) ranks.push_back({7, d});
  const auto records = records_of(ranks);
  EXPECT_FALSE(one_address_space_and_gpu(records));
  for (std::size_t a = 0; a < records.size(); ++a) {
    for (std::size_t b = 0; b < records.size(); ++b) {
      EXPECT_EQ(reach(records[a], records[b]), a == b ? PeerReach::own_pointer : PeerReach::peer_access)
          << a << " -> " << b;
    }
    const GpuShare share = process_share_of_gpu(records, static_cast<int>(a));
    EXPECT_EQ(share.ranks, 1);
    EXPECT_EQ(share.first, static_cast<int>(a));
  }
  const policy::Facts f = agreed_facts(records);
  EXPECT_EQ(f.ranks, 8);
  EXPECT_EQ(f.ranks_on_gpu, 1);
}

TEST(Placement, AProcessPerGpuMapsPeersThroughIpc) {
  std::vector<Rank> ranks;
  for (int d = 0; d < 4; ++d) ranks.push_back({100u + static_cast<unsigned>(d), d});
  const auto records = records_of(ranks);
  EXPECT_FALSE(one_address_space_and_gpu(records));
  for (std::size_t a = 0; a < records.size(); ++a) {
    for (std::size_t b = 0; b < records.size(); ++b) {
      EXPECT_EQ(reach(records[a], records[b]), a == b ? PeerReach::own_pointer : PeerReach::ipc_mapping);
    }
  }
}

TEST(Placement, ProcessesSharingOneGpuUnderMpsAreNotOneAddressSpace) {
  // Equal ordinals in different processes: the same GPU, but pointers mean nothing across them.
  const auto records = records_of({{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  EXPECT_FALSE(same_process_and_gpu(records[0], records[1]));
  EXPECT_FALSE(one_address_space_and_gpu(records));
  EXPECT_EQ(reach(records[0], records[3]), PeerReach::ipc_mapping);
  EXPECT_EQ(process_share_of_gpu(records, 2).ranks, 1);  // each process owns its hardware queues
  EXPECT_EQ(agreed_facts(records).ranks_on_gpu, 4);        // but the SMs are shared by all four
}

TEST(Placement, MixedProcessesAndGpusReachEachPeerItsOwnWay) {
  // Two processes, each driving GPUs 0 and 1 with two ranks per GPU.
  const auto records = records_of({{1, 0}, {1, 0}, {1, 1}, {1, 1}, {2, 0}, {2, 0}, {2, 1}, {2, 1}});
  EXPECT_EQ(reach(records[0], records[1]), PeerReach::own_pointer);
  EXPECT_EQ(reach(records[0], records[2]), PeerReach::peer_access);
  EXPECT_EQ(reach(records[0], records[4]), PeerReach::ipc_mapping);
  EXPECT_EQ(reach(records[0], records[7]), PeerReach::ipc_mapping);
  EXPECT_FALSE(one_address_space_and_gpu(records));
  const GpuShare third = process_share_of_gpu(records, 3);
  EXPECT_EQ(third.ranks, 2);
  EXPECT_EQ(third.first, 2);
  const GpuShare sixth = process_share_of_gpu(records, 6);
  EXPECT_EQ(sixth.ranks, 2);
  EXPECT_EQ(sixth.first, 6);
  EXPECT_EQ(agreed_facts(records).ranks_on_gpu, 4);
}

TEST(Placement, APeerThatCouldNotExportIsUnreachableOnlyFromOtherProcesses) {
  auto records = records_of({{1, 0}, {1, 1}, {2, 0}});
  records[1].exported = 0;
  records[2].exported = 0;
  EXPECT_EQ(reach(records[0], records[1]), PeerReach::peer_access);  // same process: no IPC needed
  EXPECT_EQ(reach(records[0], records[2]), PeerReach::unexported);
}

TEST(Placement, AgreedFactsAreTheMostConstrainingOfEveryRank) {
  auto records = records_of({{1, 0}, {2, 1}, {3, 2}});
  records[0].sm_major = 10;
  records[1].sm_count = 114;  // a smaller part of the same generation
  records[2].sm_major = 8;
  records[2].ranks_on_gpu = 3;
  const policy::Facts f = agreed_facts(records);
  EXPECT_EQ(f.sm_major, 8);
  EXPECT_EQ(f.sm_count, 114);
  EXPECT_EQ(f.ranks, 3);
  EXPECT_EQ(f.ranks_on_gpu, 3);
  // Every rank computes them from the same table, in any order of arrival.
  const std::vector<PeerRecord> reversed(records.rbegin(), records.rend());
  const policy::Facts g = agreed_facts(reversed);
  EXPECT_EQ(g.sm_major, f.sm_major);
  EXPECT_EQ(g.sm_count, f.sm_count);
  EXPECT_EQ(g.ranks_on_gpu, f.ranks_on_gpu);
}

}  // namespace
}  // namespace purlin::runtime
