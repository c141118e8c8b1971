// The shared Atom algorithms run by a CTA emulated with real threads: one std::thread per CUDA
// thread, a std::barrier for __syncthreads, synchronous copies for cp.async. This checks what the
// one-thread host Atom cannot: the distribution of blocks, packs and elements over threads, and
// that the pipeline's barriers order every slot refill after all reads of the slot (run under
// ThreadSanitizer, a missing barrier is a reported race; without it, usually a wrong result).
#include "atom/call.h"
#include "atom/exec.h"
#include "atom/staged_pipeline.h"
#include "atom/vector_path.h"
#include "reference.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <thread>
#include <vector>

namespace purlin::atom {
namespace {

thread_local int tl_tid = 0;

template <int Threads>
struct ThreadsExec {
  using Smem = std::uintptr_t;
  static constexpr int threads = Threads;
  std::barrier<>* bar;
  int tid() const { return tl_tid; }
  void sync() const { bar->arrive_and_wait(); }
  Pack ldg16(std::uintptr_t g) const { return HostExec{}.ldg16(g); }
  void stg16(std::uintptr_t g, const Pack& v) const { HostExec{}.stg16(g, v); }
  Pack lds16(Smem a) const { return HostExec{}.lds16(a); }
  void sts16(Smem a, const Pack& v) const { HostExec{}.sts16(a, v); }
  void fetch16(Smem a, std::uintptr_t g) const { HostExec{}.fetch16(a, g); }
  void commit() const {}
  template <int N>
  void wait_prior() const {}
};

// Runs `body` as one CTA of Threads threads.
template <int Threads, class F>
void run_cta(F&& body) {
  std::barrier<> bar(Threads);
  std::vector<std::thread> cta;
  for (int t = 0; t < Threads; ++t) {
    cta.emplace_back([&, t] {
      tl_tid = t;
      body(ThreadsExec<Threads>{&bar});
    });
  }
  for (auto& th : cta) th.join();
}

template <int Threads, int Stages, int StageBytes, class Src, class Comb>
void pipelined_call(std::uintptr_t dst, const Src& src, std::size_t bytes, const Comb& comb) {
  std::vector<Pack> ws(Stages * StageBytes / 16);
  using Body = PipelinedBody<Stages, 2, CpAsyncFetch<Stages>>;
  run_cta<Threads>([&](const auto& ex) {
    atom_call(ex, dst, src, bytes, comb,
              Body{reinterpret_cast<std::uintptr_t>(ws.data()), StageBytes, CpAsyncFetch<Stages>{}});
  });
}

TEST(AtomCtaThreads, CopyPipelineAndVectorPaths) {
  for (std::size_t bytes : {5ul, 300ul, 4096ul + 7, 40000ul}) {
    for (auto [doff, soff] : {std::pair<int, int>{0, 0}, {3, 3}, {1, 14}, {8, 0}}) {
      std::vector<Pack> s(bytes / 16 + 4), d(bytes / 16 + 4);
      const auto data = test::random_elements<std::uint8_t>(bytes, bytes + soff);
      auto* src = reinterpret_cast<unsigned char*>(s.data()) + soff;
      auto* dst = reinterpret_cast<unsigned char*>(d.data()) + doff;
      std::memcpy(src, data.data(), bytes);
      pipelined_call<32, 3, 1024>(reinterpret_cast<std::uintptr_t>(dst),
                                  OneSource{reinterpret_cast<std::uintptr_t>(src)}, bytes,
                                  CopyCombiner{});
      ASSERT_EQ(std::memcmp(dst, data.data(), bytes), 0) << bytes << " " << doff << " " << soff;
      std::memset(d.data(), 0, d.size() * 16);
      pipelined_call<64, 1, 512>(reinterpret_cast<std::uintptr_t>(dst),
                                 OneSource{reinterpret_cast<std::uintptr_t>(src)}, bytes,
                                 CopyCombiner{});
      ASSERT_EQ(std::memcmp(dst, data.data(), bytes), 0) << bytes << " " << doff << " " << soff;
    }
  }
}

TEST(AtomCtaThreads, ReduceEveryPattern) {
  using E = __nv_bfloat16;
  using Op = op::Sum;
  const std::size_t count = 20000 + 3, bytes = count * sizeof(E);
  const int n = 5;
  std::vector<std::vector<E>> data;
  for (int s = 0; s < n; ++s) data.push_back(test::random_elements<E>(count, 31 + s));
  std::vector<E> expect(count);
  for (std::size_t i = 0; i < count; ++i) {
    E x[n];
    for (int s = 0; s < n; ++s) x[s] = data[s][i];
    expect[i] = test::reference<E, Op>(x, n, E{});
  }
  for (int pattern = 0; pattern < test::kPatterns; ++pattern) {
    std::vector<std::vector<Pack>> bufs;
    std::vector<const void*> ptrs;
    for (int s = 0; s < n; ++s) {
      bufs.emplace_back(bytes / 16 + 4);
      auto* p = reinterpret_cast<unsigned char*>(bufs.back().data()) +
                test::src_offset(pattern, s, sizeof(E));
      std::memcpy(p, data[s].data(), bytes);
      ptrs.push_back(p);
    }
    std::vector<Pack> d(bytes / 16 + 4);
    auto* dst = reinterpret_cast<unsigned char*>(d.data()) + test::dst_offset(pattern, sizeof(E));
    const ReduceCombiner<E, Op> comb{Reducer<E, Op>(n, {})};
    pipelined_call<32, 4, 2048>(reinterpret_cast<std::uintptr_t>(dst), SourceArray{ptrs.data(), n},
                                bytes, comb);
    ASSERT_EQ(std::memcmp(dst, expect.data(), bytes), 0) << "pattern " << pattern;
  }
}

}  // namespace
}  // namespace purlin::atom
