// The acceptance matrix at small sizes: every collective x every type x every op (reductions)
// x counts {0, 1, 3, ~1 KiB odd, 1 MiB} x in place and out of place x roots first and last x V
// displacements explicit (with gaps) and NULL, at 1 rank (the copy path) and at 2, 4 and 8 ranks
// sharing GPU 0. Then the
// same collectives with misaligned buffers, and issued from one thread per rank.
//
// Every case compares every byte of every rank's receive and send buffers, guard bytes included,
// with the host reference. All cases of a test run back to back on one communicator, so
// protocol state (epochs, flags, staging halves) carries over from case to case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases.h"
#include "harness.h"
#include "values.h"

namespace purlin::native_test {
namespace {

struct Param {
  int world;
  Coll coll;
};

std::vector<Param> params(std::initializer_list<int> worlds) {
  std::vector<Param> v;
  for (int n : worlds) {
    for (int c = 0; c < kColls; ++c) v.push_back({n, static_cast<Coll>(c)});
  }
  return v;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return world_label(info.param.world) + "_" + coll_name(info.param.coll);
}

std::vector<int> roots(Coll c, int n) { return rooted(c) && n > 1 ? std::vector<int>{0, n - 1} : std::vector<int>{0}; }

std::vector<Op> ops(Coll c, std::vector<Op> reduction_ops) { return reduces(c) ? reduction_ops : std::vector<Op>{Op::kSum}; }

// {explicit displacements with gaps, pattern seed}; seeds 0 and 1 both include zero counts.
std::vector<std::pair<bool, int>> v_variants(Coll c) {
  return variable(c) ? std::vector<std::pair<bool, int>>{{true, 0}, {false, 1}} : std::vector<std::pair<bool, int>>{{true, 0}};
}

// 0, 1 and 3 elements, 1031 bytes' worth (odd, so no 16-byte multiple), 1 MiB.
std::vector<std::size_t> small_counts(std::size_t es) { return {0, 1, 3, (1031 / es) | 1, (std::size_t{1} << 20) / es}; }

// Runs the cross product of the given dimensions; false once the test should stop.
struct Dimensions {
  std::vector<ncclDataType_t> types;
  std::vector<Op> reduction_ops;
  std::vector<std::size_t> (*counts)(std::size_t es) = small_counts;
  // (send_shift, recv_shift) in elements, and in bytes for 1-byte types.
  std::vector<std::pair<std::size_t, std::size_t>> element_shifts = {{0, 0}};
  std::vector<std::pair<std::size_t, std::size_t>> byte_shifts = {{0, 0}};
  Style style = Style::kGroup;
};

void run_matrix(World& w, Coll coll, const Dimensions& d) {
  CaseLog log;
  const int n = w.size();
  for (ncclDataType_t t : d.types) {
    const std::size_t es = type_bytes(t);
    for (auto [send_shift, recv_shift] : es == 1 ? d.byte_shifts : d.element_shifts) {
      for (Op op : ops(coll, d.reduction_ops)) {
        for (std::size_t count : d.counts(es)) {
          for (bool in_place : {false, true}) {
            for (int root : roots(coll, n)) {
              for (auto [displs, seed] : v_variants(coll)) {
                Case c;
                c.coll = coll;
                c.type = t;
                c.op = op;
                c.count = count;
                c.in_place = in_place;
                c.root = root;
                c.send_shift = send_shift * (es == 1 ? 1 : es);
                c.recv_shift = recv_shift * (es == 1 ? 1 : es);
                c.v_displs = displs;
                c.v_seed = seed;
                if (!log.run(w.runner(), c, d.style)) return;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(log.cases(), 0);
  ::testing::Test::RecordProperty("cases", log.cases());
}

class Matrix : public GpuTestWithParam<Param> {};

TEST_P(Matrix, EveryTypeOpCountPlacementRoot) {
  World* w = world(GetParam().world);
  if (w == nullptr) return;
  Dimensions d;
  d.types.assign(kAllTypes.begin(), kAllTypes.end());
  d.reduction_ops.assign(kAllOps.begin(), kAllOps.end());
  run_matrix(*w, GetParam().coll, d);
}

INSTANTIATE_TEST_SUITE_P(Native, Matrix, ::testing::ValuesIn(params({1, 2, 4, 8})), param_name);

// Buffers off their 256-byte alignment: by one element, by different amounts for send and
// receive, and by odd byte counts where the element is a byte. In place, the receive shift
// places the one buffer.
class Misaligned : public GpuTestWithParam<Param> {};

TEST_P(Misaligned, ShiftedBuffers) {
  World* w = world(GetParam().world);
  if (w == nullptr) return;
  Dimensions d;
  d.types = {ncclUint8, ncclInt8, ncclFloat16, ncclBfloat16, ncclFloat32, ncclFloat64, ncclInt64, ncclFloat8e5m2};
  d.reduction_ops = {Op::kSum, Op::kPreMulDevice};
  // Up to 256 KiB + 1 element: several chunks in the throughput regime, at a quarter of the
  // matrix's largest checking cost.
  d.counts = [](std::size_t es) {
    return std::vector<std::size_t>{1, 3, (1031 / es) | 1, (std::size_t{256} << 10) / es + 1};
  };
  d.element_shifts = {{1, 0}, {0, 1}, {1, 3}};
  d.byte_shifts = {{1, 0}, {0, 3}, {7, 5}, {3, 1}};
  run_matrix(*w, GetParam().coll, d);
}

INSTANTIATE_TEST_SUITE_P(Native, Misaligned, ::testing::ValuesIn(params({2, 8})), param_name);

// The same calls made by one thread per rank, without a group, as frameworks with a thread (or
// process) per GPU do.
class ThreadPerRank : public GpuTestWithParam<Param> {};

TEST_P(ThreadPerRank, EveryCollective) {
  World* w = world(GetParam().world);
  if (w == nullptr) return;
  Dimensions d;
  d.types = {ncclInt8, ncclBfloat16, ncclFloat32, ncclUint64};
  d.reduction_ops = {Op::kSum, Op::kAvg, Op::kPreMulHost};
  d.counts = [](std::size_t es) { return std::vector<std::size_t>{3, (1031 / es) | 1, (std::size_t{1} << 20) / es}; };
  d.style = Style::kThreads;
  run_matrix(*w, GetParam().coll, d);
}

INSTANTIATE_TEST_SUITE_P(Native, ThreadPerRank, ::testing::ValuesIn(params({4, 8})), param_name);

}  // namespace
}  // namespace purlin::native_test
