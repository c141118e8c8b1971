// Host Atom tests (CI, no GPU). The host Atom runs the GPU Atoms' own plan, window, realignment and
// combine code (exec.h), so these tests also cover that arithmetic for every alignment.
#include "purlin/atom_host.h"
#include "reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

namespace purlin::atom {
namespace {

using test::dst_offset;
using test::kPatterns;
using test::src_offset;

// 16-byte aligned bytes with room for an offset and guard bytes on both sides.
class Buffer {
 public:
  static constexpr std::size_t kGuard = 48;
  explicit Buffer(std::size_t bytes) : storage_((bytes + 2 * kGuard) / 16 + 2) {}
  unsigned char* at(std::size_t offset) { return bytes() + kGuard + offset; }
  unsigned char* bytes() { return reinterpret_cast<unsigned char*>(storage_.data()); }
  std::size_t size() const { return storage_.size() * 16; }

 private:
  std::vector<Pack> storage_;
};

TEST(AtomPlan, SplitCoversEveryByteAndAlignsTheBody) {
  for (std::size_t es : {1, 2, 4, 8}) {
    for (std::uintptr_t dst = 0; dst < 48; ++dst) {
      for (std::size_t bytes = 0; bytes < 100; bytes += es) {
        const Split sp = split(dst, bytes, es);
        ASSERT_LE(sp.head + sp.body, bytes);
        ASSERT_EQ(sp.body % 16, 0u);
        if (dst % es != 0) {
          ASSERT_EQ(sp.head, bytes);
          continue;
        }
        ASSERT_LT(sp.head, 16u);
        ASSERT_EQ(sp.head % es, 0u);
        ASSERT_LT(bytes - sp.head - sp.body, 16u + (sp.body == 0 ? 16u : 0u));
        if (sp.body != 0) {
          ASSERT_EQ((dst + sp.head) % 16, 0u);
        }
      }
    }
  }
}

TEST(AtomPlan, SliceCoversTheRangeOnGrainBoundaries) {
  for (std::size_t bytes : {0ul, 1ul, 15ul, 16ul, 17ul, 4095ul, 1000003ul}) {
    for (unsigned parts : {1u, 2u, 3u, 7u, 132u}) {
      std::size_t next = 0;
      for (unsigned i = 0; i < parts; ++i) {
        const Slice s = slice(bytes, parts, i);
        ASSERT_EQ(s.begin, next);
        ASSERT_LE(s.begin, s.end);
        ASSERT_TRUE(s.begin % 16 == 0 || s.begin == bytes);
        next = s.end;
      }
      ASSERT_EQ(next, bytes);
    }
  }
}

TEST(AtomPlan, ChunkPlanLeavesRoomForRealignment) {
  for (int n = 1; n <= 16; ++n) {
    for (bool mis : {false, true}) {
      const ChunkPlan p = chunk_plan(1 << 20, n, 4096, mis);
      ASSERT_EQ(p.stride % 16, 0u);
      ASSERT_LE(p.stride * static_cast<unsigned>(n), 4096u);
      ASSERT_EQ(p.chunk + (mis ? 16u : 0u), p.stride);
      ASSERT_EQ(p.chunks, ((1u << 20) + p.chunk - 1) / p.chunk);
    }
  }
  EXPECT_EQ(chunk_plan(1 << 20, 16, 256, true).chunks, 0u);  // 16-byte slots: no room
}

TEST(AtomPack, ExtractMatchesByteArithmetic) {
  unsigned char bytes[32];
  std::iota(bytes, bytes + 32, 1);
  Pack lo, hi;
  std::memcpy(&lo, bytes, 16);
  std::memcpy(&hi, bytes + 16, 16);
  for (unsigned shift = 0; shift < 16; ++shift) {
    const Pack x = extract(lo, hi, shift);
    ASSERT_EQ(std::memcmp(&x, bytes + shift, 16), 0) << "shift " << shift;
  }
}

TEST(AtomPack, LoadPartialReadsOnlyTheRange) {
  Buffer b(64);
  std::iota(b.bytes(), b.bytes() + b.size(), 0);
  const auto base = reinterpret_cast<std::uintptr_t>(b.at(0));
  const Pack x = load_partial(base, base + 5, base + 9);
  unsigned char got[16];
  std::memcpy(got, &x, 16);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], i >= 5 && i < 9 ? b.at(0)[i] : 0) << i;
}

// Configurations chosen to reach every path: one stage; tiny stages (many chunks, and for 8
// sources 64-byte slots) and reductions through the shared-memory pipeline (pipeline_sources
// 16); the default (reductions on the register path). Threads do not matter on the host.
using Configs = ::testing::Types<Config<32, 1, 256, 1>, Config<32, 2, 512, 2, 16>,
                                 Config<64, 3, 4096, 3, 16>, DefaultConfig>;

template <class Cfg>
class HostAtomCopy : public ::testing::Test {};
TYPED_TEST_SUITE(HostAtomCopy, Configs);

TYPED_TEST(HostAtomCopy, EveryAlignmentPairAndSize) {
  using A = HostAtom<TypeParam>;
  std::vector<Pack> ws(A::workspace_bytes / 16);
  for (std::size_t bytes : {0ul, 1ul, 7ul, 15ul, 16ul, 17ul, 33ul, 4095ul, 3 * 16384ul + 5}) {
    for (std::size_t doff = 0; doff < 16; ++doff) {
      for (std::size_t soff = 0; soff < 16; ++soff) {
        Buffer src(bytes + 16), dst(bytes + 16);
        const auto data = test::random_elements<std::uint8_t>(src.size(), bytes * 256 + soff);
        std::memcpy(src.bytes(), data.data(), src.size());
        std::memset(dst.bytes(), 0xA5, dst.size());
        A::copy(dst.at(doff), src.at(soff), bytes, ws.data());
        ASSERT_EQ(std::memcmp(dst.at(doff), src.at(soff), bytes), 0)
            << bytes << " bytes, dst+" << doff << " src+" << soff;
        for (unsigned char* p = dst.bytes(); p < dst.at(doff); ++p) ASSERT_EQ(*p, 0xA5);
        for (unsigned char* p = dst.at(doff) + bytes; p < dst.bytes() + dst.size(); ++p) {
          ASSERT_EQ(*p, 0xA5);
        }
      }
    }
  }
}

TYPED_TEST(HostAtomCopy, LargeMisaligned) {
  using A = HostAtom<TypeParam>;
  const std::size_t bytes = (1u << 20) + 3;
  Buffer src(bytes + 16), dst(bytes + 16);
  const auto data = test::random_elements<std::uint8_t>(src.size(), 7);
  std::memcpy(src.bytes(), data.data(), src.size());
  for (auto [doff, soff] : {std::pair<int, int>{0, 0}, {5, 11}, {12, 3}}) {
    A::copy(dst.at(doff), src.at(soff), bytes, nullptr);
    ASSERT_EQ(std::memcmp(dst.at(doff), src.at(soff), bytes), 0) << doff << " " << soff;
  }
}

// A workspace smaller than Config::workspace_bytes (a GPU with less shared memory per block)
// keeps the stages and shrinks each slot, in 128-byte steps, down to the register path.
TEST(AtomConfig, StageBytesWithinAWorkspace) {
  using Copy = DefaultConfig;             // 8 x 16 KiB
  using Reduce = Config<256, 3, 65536>;   // 3 x 64 KiB
  EXPECT_EQ(Copy::stage_bytes_within(Copy::workspace_bytes), 16384u);
  EXPECT_EQ(Copy::stage_bytes_within(Copy::workspace_bytes + 4096), 16384u);
  EXPECT_EQ(Copy::stage_bytes_within(Copy::workspace_bytes - 1), 16384u - 128);
  EXPECT_EQ(Reduce::stage_bytes_within(101248), 33664u);  // 99 KiB less 8 ranks' table, in 128s
  EXPECT_EQ(Copy::stage_bytes_within(128 + 8 * 256), 256u);
  EXPECT_EQ(Copy::stage_bytes_within(128 + 8 * 256 - 1), 0u);
  EXPECT_EQ(Copy::stage_bytes_within(128), 0u);
  EXPECT_EQ(Copy::stage_bytes_within(0), 0u);
  for (std::size_t bytes = 0; bytes < Reduce::workspace_bytes + 512; bytes += 97) {
    const std::uint32_t s = Reduce::stage_bytes_within(bytes);
    ASSERT_EQ(s % 128, 0u) << bytes;
    ASSERT_LE(kWorkspaceHeaderBytes + 3 * static_cast<std::size_t>(s), std::max<std::size_t>(bytes, 128)) << bytes;
  }
}

// Every workspace size gives the same bytes: full, shrunk slots (many chunks, the realigning
// spill block included), and too small for any slot (register path). The guard after the
// workspace must stay untouched.
TEST(AtomConfig, SmallerWorkspacesCopyAndReduceTheSame) {
  using Cfg = Config<32, 3, 4096, 2, 16>;
  using A = HostAtom<Cfg>;
  constexpr unsigned char kGuardByte = 0xC3;
  const std::size_t bytes = 50000 + 5;
  Buffer src(bytes + 16), src2(bytes + 16), dst(bytes + 16);
  const auto data = test::random_elements<std::uint8_t>(src.size(), 11);
  const auto data2 = test::random_elements<std::uint8_t>(src2.size(), 12);
  std::memcpy(src.bytes(), data.data(), src.size());
  std::memcpy(src2.bytes(), data2.data(), src2.size());
  for (std::size_t ws_bytes : {Cfg::workspace_bytes, std::size_t{128 + 3 * 1024}, std::size_t{128 + 3 * 256 + 100},
                               std::size_t{128 + 3 * 256 - 1}, std::size_t{0}}) {
    std::vector<Pack> ws(Cfg::workspace_bytes / 16 + 1);
    auto* base = reinterpret_cast<unsigned char*>(ws.data());
    std::memset(base, kGuardByte, ws.size() * 16);
    for (auto [doff, soff] : {std::pair<int, int>{0, 0}, {5, 11}}) {
      A::copy(dst.at(doff), src.at(soff), bytes, Workspace{base, ws_bytes});
      ASSERT_EQ(std::memcmp(dst.at(doff), src.at(soff), bytes), 0) << ws_bytes << " " << doff << " " << soff;
      const void* ptrs[] = {src.at(soff), src2.at(soff)};
      A::reduce<std::uint8_t, op::Sum>(dst.at(doff), ptrs, 2, bytes, Workspace{base, ws_bytes});
      for (std::size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(dst.at(doff)[i], static_cast<std::uint8_t>(src.at(soff)[i] + src2.at(soff)[i]))
            << ws_bytes << " byte " << i;
      }
    }
    for (std::size_t i = ws_bytes; i < ws.size() * 16; ++i) ASSERT_EQ(base[i], kGuardByte) << ws_bytes << " " << i;
  }
}

template <class List>
struct ToGTest;
template <class... Ts>
struct ToGTest<TypeList<Ts...>> {
  using type = ::testing::Types<Ts...>;
};

template <class E>
class HostAtomReduce : public ::testing::Test {};
TYPED_TEST_SUITE(HostAtomReduce, ToGTest<ElementTypes>::type);

// Runs `Op` on `count` elements in every layout pattern with each source count of `ns`, on two
// configurations, against the reference.
template <class E, class Op>
void check_reduce(std::size_t count, const std::vector<int>& ns, bool device_scalar) {
  constexpr std::size_t es = sizeof(E);
  const std::size_t bytes = count * es;
  constexpr int kMaxSources = 8;
  std::vector<std::vector<E>> data;
  for (int s = 0; s < kMaxSources; ++s) data.push_back(test::random_elements<E>(count, 1000 * count + s));
  const E scalar = test::test_scalar<E>();
  OpArg<E> arg{};
  if (device_scalar) {
    arg.scalar_ptr = &scalar;
  } else {
    arg.scalar = scalar;
  }
  std::vector<E> expect(count);
  std::vector<E> x(kMaxSources);
  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    std::vector<Buffer> src;
    std::vector<const void*> ptrs;
    for (int s = 0; s < kMaxSources; ++s) {
      src.emplace_back(bytes + 16);
      std::memcpy(src.back().at(src_offset(pattern, s, es)), data[s].data(), bytes);
    }
    for (int s = 0; s < kMaxSources; ++s) ptrs.push_back(src[s].at(src_offset(pattern, s, es)));
    for (int n : ns) {
      for (std::size_t i = 0; i < count; ++i) {
        for (int s = 0; s < n; ++s) x[s] = data[s][i];
        expect[i] = test::reference<E, Op>(x.data(), n, scalar);
      }
      Buffer d1(bytes + 16), d2(bytes + 16);
      std::memset(d1.bytes(), 0x5A, d1.size());
      std::memset(d2.bytes(), 0x5A, d2.size());
      unsigned char* o1 = d1.at(dst_offset(pattern, es));
      unsigned char* o2 = d2.at(dst_offset(pattern, es));
      HostAtom<Config<32, 2, 512, 1>>::reduce<E, Op>(o1, ptrs.data(), n, bytes, nullptr, arg);
      HostAtom<Config<64, 3, 4096, 3, 16>>::reduce<E, Op>(o2, ptrs.data(), n, bytes, nullptr, arg);
      const auto where = [&] {
        return test::type_name<E>() + " " + test::op_name<Op>() + " count " +
               std::to_string(count) + " pattern " + std::to_string(pattern) + " n " +
               std::to_string(n);
      };
      ASSERT_EQ(std::memcmp(o1, expect.data(), bytes), 0) << where();
      ASSERT_EQ(std::memcmp(o2, expect.data(), bytes), 0) << where();
      ASSERT_TRUE(std::all_of(d1.bytes(), o1, [](unsigned char c) { return c == 0x5A; })) << where();
      ASSERT_TRUE(std::all_of(o1 + bytes, d1.bytes() + d1.size(),
                              [](unsigned char c) { return c == 0x5A; }))
          << where();
    }
  }
}

template <class E, class... Ops>
void check_all_ops(TypeList<Ops...>, std::size_t count, const std::vector<int>& ns) {
  (check_reduce<E, Ops>(count, ns, false), ...);
}

TYPED_TEST(HostAtomReduce, SmallSizesEverySourceCount) {
  for (std::size_t count : {1ul, 7ul, 4095ul}) {
    check_all_ops<TypeParam>(ReduceOps{}, count, {1, 2, 3, 4, 5, 6, 7, 8});
  }
}

TYPED_TEST(HostAtomReduce, LargeSize) { check_all_ops<TypeParam>(ReduceOps{}, 65536 + 3, {1, 2, 8}); }

TYPED_TEST(HostAtomReduce, DeviceResidentScalar) {
  check_reduce<TypeParam, op::PreMulSum>(4095, {1, 3}, true);
}

// Semantics spot checks with hand-computed values.
TEST(HostAtomSemantics, IntegersWrapAndAverageTheWrappedSum) {
  const std::int8_t a[2] = {100, 100};
  const std::int8_t b[2] = {100, -7};
  const void* src[2] = {a, b};
  std::int8_t out[2];
  HostAtom<>::reduce<std::int8_t, op::Sum>(out, src, 2, 2, nullptr);
  EXPECT_EQ(out[0], static_cast<std::int8_t>(-56));  // 200 wraps
  EXPECT_EQ(out[1], 93);
  HostAtom<>::reduce<std::int8_t, op::Avg>(out, src, 2, 2, nullptr);
  EXPECT_EQ(out[0], -28);  // wrapped sum -56, divided by 2
  EXPECT_EQ(out[1], 46);   // 93 / 2 truncates
}

TEST(HostAtomSemantics, NarrowFloatsRoundOnce) {
  // 1 + 2^-8 + 2^-8 in bf16 (8 mantissa bits): pairwise bf16 rounding would give 1, fp32
  // accumulation gives 1 + 2^-7 exactly.
  const __nv_bfloat16 a[1] = {__float2bfloat16_rn(1.0f)};
  const __nv_bfloat16 b[1] = {__float2bfloat16_rn(1.0f / 256)};
  const void* src[3] = {a, b, b};
  __nv_bfloat16 out[1];
  HostAtom<>::reduce<__nv_bfloat16, op::Sum>(out, src, 3, sizeof(out), nullptr);
  EXPECT_EQ(__bfloat162float(out[0]), 1.0f + 1.0f / 128);
}

TEST(HostAtomSemantics, Fp8Saturates) {
  const __nv_fp8_e4m3 a[1] = {__nv_fp8_e4m3(448.0f)};
  const void* src[2] = {a, a};
  __nv_fp8_e4m3 out[1];
  HostAtom<>::reduce<__nv_fp8_e4m3, op::Sum>(out, src, 2, 1, nullptr);
  EXPECT_EQ(static_cast<float>(out[0]), 448.0f);
}

}  // namespace
}  // namespace purlin::atom
