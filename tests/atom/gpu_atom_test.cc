// GPU Atom tests: every type x op x size x layout pattern x source count, on every Atom variant
// (different datapaths, pipeline configurations and CTA counts), compared byte for byte with the
// host reference, guard bytes included. All variants matching the reference bitwise is the
// determinism check. SKIPPED when no GPU is present.
//
// Sizes are element counts {1, 7, 4095, 1 MiB + 3}: for the 1-byte types exactly the byte sizes of
// the acceptance list, for wider types the same shapes (odd counts, odd tails) scaled by sizeof(E).
#include "gpu_launch.h"
#include "reference.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace purlin::atom::test {
namespace {

// Compute capability as major * 10 + minor; -1 without a usable device.
int device_cc() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return -1;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return -1;
  return prop.major * 10 + prop.minor;
}

// PURLIN_ATOM_SKIP_BULK=1 leaves out the bulk-copy (TMA) variants: run_gpu.sh reruns the suite
// that way when a first run crashed or hung, so one faulty datapath does not hide the others.
bool runs(const VariantInfo& v, int cc) {
  static const bool skip_bulk = [] {
    const char* e = std::getenv("PURLIN_ATOM_SKIP_BULK");
    return e != nullptr && std::string(e) == "1";
  }();
  return cc >= v.min_cc && !(skip_bulk && std::string(v.name).rfind("sm90_bulk", 0) == 0);
}

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (cudaMalloc(&p_, bytes) != cudaSuccess) p_ = nullptr;
  }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }
  std::size_t size() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (cudaMallocHost(&p_, bytes) != cudaSuccess) p_ = nullptr;
  }
  ~PinnedBuffer() { cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  unsigned char* get() const { return static_cast<unsigned char*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
};

#define PURLIN_ASSERT_CUDA(expr)                                              \
  do {                                                                        \
    const cudaError_t purlin_err = (expr);                                    \
    ASSERT_EQ(purlin_err, cudaSuccess) << #expr << ": " << cudaGetErrorString(purlin_err); \
  } while (0)

constexpr unsigned char kGuard = 0x5A;
constexpr std::size_t kSlack = 64;  // bytes around every buffer: offsets up to 15 plus guards

bool all_guard(const unsigned char* b, const unsigned char* e) {
  return std::all_of(b, e, [](unsigned char c) { return c == kGuard; });
}

// Byte offset of the first difference, or `bytes` when equal (memcmp first: it is much faster).
std::size_t first_difference(const unsigned char* a, const unsigned char* b, std::size_t bytes) {
  if (std::memcmp(a, b, bytes) == 0) return bytes;
  return static_cast<std::size_t>(std::mismatch(a, a + bytes, b).first - a);
}

// Splits [0, count) over the host's cores: the reference of 8 sources x 1 Mi elements is the
// slowest part of the suite otherwise.
template <class F>
void parallel_for(std::size_t count, F&& f) {
  const unsigned workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  if (count < 4096 || workers == 1) {
    f(std::size_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] { f(count * w / workers, count * (w + 1) / workers); });
  }
  for (auto& t : pool) t.join();
}

class AtomGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    cc_ = device_cc();
    if (cc_ < 0) GTEST_SKIP() << "no CUDA device";
  }
  int cc_ = -1;
};

// ------------------------------------------------------------------------------------------------
// Reduce

template <class E>
class AtomGpuReduce : public AtomGpu {};

template <class List>
struct ToGTest;
template <class... Ts>
struct ToGTest<TypeList<Ts...>> {
  using type = ::testing::Types<Ts...>;
};
TYPED_TEST_SUITE(AtomGpuReduce, ToGTest<ElementTypes>::type);

struct ReduceCase {
  std::size_t count;
  int cc;
  bool device_scalar;
  std::vector<int> ns;
};

// One op on one size: reference for each source count once, then every layout pattern, source
// count and variant against it.
template <class E, class Op>
void check_op(int op_index, const ReduceCase& c, const std::vector<std::vector<E>>& data) {
  constexpr std::size_t es = sizeof(E);
  const std::size_t bytes = c.count * es;
  const E scalar = test_scalar<E>();
  DeviceBuffer dev_scalar(sizeof(E));
  PURLIN_ASSERT_CUDA(cudaMemcpy(dev_scalar.get(), &scalar, sizeof(E), cudaMemcpyHostToDevice));
  OpArg<E> arg{};
  if (c.device_scalar) {
    arg.scalar_ptr = reinterpret_cast<const E*>(dev_scalar.get());
  } else {
    arg.scalar = scalar;
  }

  std::vector<std::vector<E>> expect(c.ns.size(), std::vector<E>(c.count));
  for (std::size_t k = 0; k < c.ns.size(); ++k) {
    parallel_for(c.count, [&](std::size_t b, std::size_t e) {
      E x[kMaxTestSources];
      for (std::size_t i = b; i < e; ++i) {
        for (int s = 0; s < c.ns[k]; ++s) x[s] = data[s][i];
        expect[k][i] = reference<E, Op>(x, c.ns[k], scalar);
      }
    });
  }

  std::vector<DeviceBuffer> src;
  for (int s = 0; s < kMaxTestSources; ++s) src.emplace_back(bytes + kSlack);
  DeviceBuffer dst(bytes + kSlack);
  PinnedBuffer out(bytes + kSlack);
  for (const auto& b : src) ASSERT_NE(b.get(), nullptr);
  ASSERT_NE(dst.get(), nullptr);
  ASSERT_NE(out.get(), nullptr);

  for (int pattern = 0; pattern < kPatterns; ++pattern) {
    const void* ptrs[kMaxTestSources];
    for (int s = 0; s < kMaxTestSources; ++s) {
      unsigned char* p = src[s].get() + 16 + src_offset(pattern, s, es);
      PURLIN_ASSERT_CUDA(cudaMemcpy(p, data[s].data(), bytes, cudaMemcpyHostToDevice));
      ptrs[s] = p;
    }
    const std::size_t doff = 16 + dst_offset(pattern, es);
    for (std::size_t k = 0; k < c.ns.size(); ++k) {
      for (int v = 0; v < kReduceVariants; ++v) {
        const VariantInfo info = reduce_variant(v);
        if (!runs(info, c.cc)) continue;
        const int grid = info.grid * (c.count > 65536 ? 8 : 1);
        PURLIN_ASSERT_CUDA(cudaMemset(dst.get(), kGuard, dst.size()));
        PURLIN_ASSERT_CUDA(launch_reduce<E>(v, op_index, dst.get() + doff, ptrs, c.ns[k], bytes, arg,
                                            grid, nullptr));
        PURLIN_ASSERT_CUDA(cudaMemcpy(out.get(), dst.get(), dst.size(), cudaMemcpyDeviceToHost));
        const auto where = [&] {
          return type_name<E>() + " " + op_name<Op>() + " count " + std::to_string(c.count) +
                 " pattern " + std::to_string(pattern) + " n " + std::to_string(c.ns[k]) + " " +
                 info.name + (c.device_scalar ? " device scalar" : "");
        };
        const unsigned char* got = out.get() + doff;
        const auto* want = reinterpret_cast<const unsigned char*>(expect[k].data());
        const std::size_t diff = first_difference(got, want, bytes);
        ASSERT_EQ(diff, bytes) << where() << ": first difference at byte " << diff;
        ASSERT_TRUE(all_guard(out.get(), got)) << where() << ": wrote before dst";
        ASSERT_TRUE(all_guard(got + bytes, out.get() + dst.size())) << where() << ": wrote past dst";
      }
    }
  }
}

template <class E, class... Ops>
void check_ops(TypeList<Ops...>, const ReduceCase& c) {
  std::vector<std::vector<E>> data;
  for (int s = 0; s < kMaxTestSources; ++s) data.push_back(random_elements<E>(c.count, 77 * c.count + s));
  int index = 0;
  (
      [&] {
        const int i = index++;
        if (!::testing::Test::HasFatalFailure()) check_op<E, Ops>(i, c, data);
      }(),
      ...);
}

TYPED_TEST(AtomGpuReduce, EveryOpSizePatternAndSourceCount) {
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4095}, (std::size_t{1} << 20) + 3}) {
    check_ops<TypeParam>(ReduceOps{}, ReduceCase{count, this->cc_, false, {1, 2, 3, 4, 5, 6, 7, 8}});
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TYPED_TEST(AtomGpuReduce, PreMulSumDeviceResidentScalar) {
  const ReduceCase c{65536 + 5, this->cc_, true, {1, 3, 8}};
  std::vector<std::vector<TypeParam>> data;
  for (int s = 0; s < kMaxTestSources; ++s) data.push_back(random_elements<TypeParam>(c.count, 5 + s));
  check_op<TypeParam, op::PreMulSum>(5, c, data);
}

// In place: dst is exactly source 0 (SNAC's in-place collectives).
TEST_F(AtomGpu, ReduceInPlace) {
  using E = float;
  const std::size_t count = (1u << 20) + 3, bytes = count * sizeof(E);
  std::vector<std::vector<E>> data;
  for (int s = 0; s < 4; ++s) data.push_back(random_elements<E>(count, 900 + s));
  std::vector<E> expect(count);
  for (std::size_t i = 0; i < count; ++i) {
    E x[4] = {data[0][i], data[1][i], data[2][i], data[3][i]};
    expect[i] = reference<E, op::Sum>(x, 4, E{});
  }
  std::vector<DeviceBuffer> src;
  for (int s = 0; s < 4; ++s) src.emplace_back(bytes + kSlack);
  std::vector<E> out(count);
  for (int v = 0; v < kReduceVariants; ++v) {
    const VariantInfo info = reduce_variant(v);
    if (!runs(info, cc_)) continue;
    const void* ptrs[4];
    for (int s = 0; s < 4; ++s) {
      unsigned char* p = src[s].get() + 16 + src_offset(1, s, sizeof(E));
      PURLIN_ASSERT_CUDA(cudaMemcpy(p, data[s].data(), bytes, cudaMemcpyHostToDevice));
      ptrs[s] = p;
    }
    PURLIN_ASSERT_CUDA(launch_reduce<E>(v, 0, const_cast<void*>(ptrs[0]), ptrs, 4, bytes, {},
                                        info.grid * 8, nullptr));
    PURLIN_ASSERT_CUDA(cudaMemcpy(out.data(), ptrs[0], bytes, cudaMemcpyDeviceToHost));
    ASSERT_EQ(std::memcmp(out.data(), expect.data(), bytes), 0) << info.name;
  }
}

// ------------------------------------------------------------------------------------------------
// Copy

void check_copy(int cc, std::size_t bytes, std::size_t doff, std::size_t soff, DeviceBuffer& src,
                DeviceBuffer& dst, const std::vector<unsigned char>& data, PinnedBuffer& out) {
  for (int v = 0; v < kCopyVariants; ++v) {
    const VariantInfo info = copy_variant(v);
    if (!runs(info, cc)) continue;
    const int grid = info.grid * (bytes > (1u << 20) ? 8 : 1);
    PURLIN_ASSERT_CUDA(cudaMemset(dst.get(), kGuard, dst.size()));
    PURLIN_ASSERT_CUDA(launch_copy(v, dst.get() + 16 + doff, src.get() + 16 + soff, bytes, grid, nullptr));
    PURLIN_ASSERT_CUDA(cudaMemcpy(out.get(), dst.get(), dst.size(), cudaMemcpyDeviceToHost));
    const unsigned char* got = out.get() + 16 + doff;
    const auto where = [&] {
      return std::to_string(bytes) + " bytes, dst+" + std::to_string(doff) + " src+" +
             std::to_string(soff) + " " + info.name;
    };
    const std::size_t diff = first_difference(got, data.data() + 16 + soff, bytes);
    ASSERT_EQ(diff, bytes) << where() << ": first difference at byte " << diff;
    ASSERT_TRUE(all_guard(out.get(), got)) << where();
    ASSERT_TRUE(all_guard(got + bytes, out.get() + dst.size())) << where();
  }
}

TEST_F(AtomGpu, CopyEveryAlignmentPair) {
  for (std::size_t bytes : {0ul, 1ul, 7ul, 15ul, 16ul, 17ul, 4095ul}) {
    DeviceBuffer src(bytes + kSlack), dst(bytes + kSlack);
    PinnedBuffer out(bytes + kSlack);
    const auto data = random_elements<unsigned char>(bytes + kSlack, bytes);
    PURLIN_ASSERT_CUDA(cudaMemcpy(src.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
    for (std::size_t doff = 0; doff < 16; ++doff) {
      for (std::size_t soff = 0; soff < 16; ++soff) {
        check_copy(cc_, bytes, doff, soff, src, dst, data, out);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST_F(AtomGpu, CopyLarge) {
  for (std::size_t bytes : {3 * 16384ul + 5, (1ul << 20) + 3, (64ul << 20) + 1}) {
    DeviceBuffer src(bytes + kSlack), dst(bytes + kSlack);
    PinnedBuffer out(bytes + kSlack);
    const auto data = random_elements<unsigned char>(bytes + kSlack, bytes);
    PURLIN_ASSERT_CUDA(cudaMemcpy(src.get(), data.data(), data.size(), cudaMemcpyHostToDevice));
    for (std::size_t i = 0; i < 16; ++i) {
      check_copy(cc_, bytes, i, (7 * i + 3) % 16, src, dst, data, out);
      if (HasFatalFailure()) return;
    }
  }
}

// More than 4 GiB in one call: no 32-bit offset anywhere. Checked on the device.
TEST_F(AtomGpu, CopyHuge) {
  const std::size_t bytes = (4ul << 30) + 17;
  DeviceBuffer src(bytes + kSlack), dst(bytes + kSlack), count(sizeof(unsigned long long));
  if (src.get() == nullptr || dst.get() == nullptr) GTEST_SKIP() << "not enough device memory";
  PURLIN_ASSERT_CUDA(fill_pattern(src.get(), src.size(), nullptr));
  for (auto [doff, soff] : {std::pair<std::size_t, std::size_t>{0, 0}, {3, 9}}) {
    for (int v = 0; v < kCopyVariants; ++v) {
      const VariantInfo info = copy_variant(v);
      if (!runs(info, cc_) || info.grid < 5) continue;  // the 1- and 3-CTA variants are too slow
      PURLIN_ASSERT_CUDA(cudaMemset(dst.get(), kGuard, dst.size()));
      PURLIN_ASSERT_CUDA(launch_copy(v, dst.get() + 16 + doff, src.get() + 16 + soff, bytes, 132, nullptr));
      unsigned long long mismatches = 1;
      PURLIN_ASSERT_CUDA(count_mismatches(dst.get() + 16 + doff, src.get() + 16 + soff, bytes,
                                          reinterpret_cast<unsigned long long*>(count.get()), nullptr));
      PURLIN_ASSERT_CUDA(cudaMemcpy(&mismatches, count.get(), sizeof(mismatches), cudaMemcpyDeviceToHost));
      EXPECT_EQ(mismatches, 0u) << info.name << " dst+" << doff << " src+" << soff;
      unsigned char edge[2];
      PURLIN_ASSERT_CUDA(cudaMemcpy(&edge[0], dst.get() + 16 + doff - 1, 1, cudaMemcpyDeviceToHost));
      PURLIN_ASSERT_CUDA(cudaMemcpy(&edge[1], dst.get() + 16 + doff + bytes, 1, cudaMemcpyDeviceToHost));
      EXPECT_EQ(edge[0], kGuard) << info.name;
      EXPECT_EQ(edge[1], kGuard) << info.name;
    }
  }
}

}  // namespace
}  // namespace purlin::atom::test
