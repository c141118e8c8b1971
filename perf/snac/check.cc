#include "check.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <mutex>
#include <thread>

namespace purlin::snac_bench {
namespace {

// Host memory for inputs on their way to the device and outputs on their way back, over all
// ranks: a 256 MiB AllReduce on 8 ranks moves 4 GiB, which need not be held at once.
constexpr std::size_t kStagingBytes = std::size_t{256} << 20;
// bf16 has 8 significant bits: every integer of magnitude <= 256 is exact.
constexpr int kMaxExactSum = 256;

// Rank r's input element i, in [-amp, amp). A hash rather than a short-period formula, so that
// data delivered to the wrong rank or offset differs from the data that belongs there.
int pattern(int r, std::size_t i, int amp) {
  std::uint64_t h = (static_cast<std::uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^
                    (static_cast<std::uint64_t>(r) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  return static_cast<int>(h & static_cast<std::uint64_t>(2 * amp - 1)) - amp;
}

std::uint16_t to_bf16(int v) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16); }
float from_bf16(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// The reference: element idx of rank r's output, idx = q * count + rem (q, rem carried by the
// caller: a division per element would dominate the check).
struct Reference {
  Coll c;
  int n;
  std::size_t count;
  int amp;

  int sum(std::size_t i) const {
    int s = 0;
    for (int k = 0; k < n; ++k) s += pattern(k, i, amp);
    return s;
  }

  int at(int r, std::size_t idx, std::size_t q, std::size_t rem) const {
    const std::size_t mine = static_cast<std::size_t>(r) * count;  // rank r's partition of an input
    switch (c) {
      case Coll::kAllReduce:
      case Coll::kReduce: return sum(idx);
      case Coll::kReduceScatter:
      case Coll::kReduceScatterV: return sum(mine + idx);
      case Coll::kAllGather:
      case Coll::kAllGatherV:
      case Coll::kGather: return pattern(static_cast<int>(q), rem, amp);
      case Coll::kAllToAll:
      case Coll::kAllToAllV:
      case Coll::kSendRecvAllToAll: return pattern(static_cast<int>(q), mine + rem, amp);
      case Coll::kBroadcast: return pattern(0, idx, amp);
      case Coll::kScatter: return pattern(0, mine + idx, amp);
    }
    return 0;
  }
};

// Whose output is defined: the root's alone for Reduce and Gather.
std::vector<int> checked_ranks(Coll c, int n) {
  if (c == Coll::kReduce || c == Coll::kGather) return {0};
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

// Whose input is read: the root's alone for Broadcast and Scatter.
int filled_ranks(Coll c, int n) { return c == Coll::kBroadcast || c == Coll::kScatter ? 1 : n; }

// The reference is then computed once per element for all ranks.
bool same_for_every_rank(Coll c) {
  return c == Coll::kAllReduce || c == Coll::kAllGather || c == Coll::kAllGatherV || c == Coll::kBroadcast;
}

// f(begin, end) over [0, count), split among the host's cores: the reference of a 256 MiB
// AllReduce on 8 ranks is 10^9 pattern values.
template <class F>
void parallel_for(std::size_t count, const F& f) {
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 32);
  if (workers == 1 || count < (std::size_t{1} << 16)) {
    f(std::size_t{0}, count);
    return;
  }
  const std::size_t per = (count + workers - 1) / workers;
  std::vector<std::thread> threads;
  for (std::size_t b = 0; b < count; b += per) threads.emplace_back([&f, b, per, count] { f(b, std::min(count, b + per)); });
  for (auto& t : threads) t.join();
}

struct Bad {
  int rank = -1;
  std::size_t index = 0;
  int want = 0;
  float got = 0;
  bool before(const Bad& o) const { return o.rank < 0 || rank < o.rank || (rank == o.rank && index < o.index); }
};

}  // namespace

Checker::Checker(int n) : n_(n) {
  amp_ = 1;
  while (n_ * amp_ * 2 <= kMaxExactSum) amp_ *= 2;
  if (n_ * amp_ > kMaxExactSum) {
    unusable_ = std::to_string(n_) + " ranks: sums of even +-1 inputs may exceed bf16's exact integers (256)";
    return;
  }
  slot_elems_ = std::max<std::size_t>(kStagingBytes / sizeof(std::uint16_t) / static_cast<std::size_t>(n_), 1);
  const std::size_t elems = slot_elems_ * static_cast<std::size_t>(n_);
  void* p = nullptr;
  // Pinned: copies run at the link's rate, several times that of pageable memory.
  if (cudaMallocHost(&p, elems * sizeof(std::uint16_t)) == cudaSuccess) {
    staging_ = static_cast<std::uint16_t*>(p);
    pinned_ = true;
  } else {
    cudaGetLastError();  // not sticky; pageable memory works, only slower
    staging_ = new std::uint16_t[elems];
  }
}

Checker::~Checker() {
  if (pinned_) {
    cudaFreeHost(staging_);
  } else {
    delete[] staging_;
  }
}

CheckResult Checker::run(Ranks& ranks, Coll c, const Shape& s, const std::vector<void*>& in,
                         const std::vector<void*>& out) {
  CheckResult res;
  const Reference ref{c, n_, s.count, amp_};
  const std::size_t total = slot_elems_ * static_cast<std::size_t>(n_);

  // Inputs, a rank at a time through all of the staging.
  const std::size_t in_elems = s.in_bytes / sizeof(std::uint16_t);
  for (int r = 0; r < filled_ranks(c, n_); ++r) {
    for (std::size_t o = 0; o < in_elems; o += total) {
      const std::size_t len = std::min(total, in_elems - o);
      parallel_for(len, [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) staging_[j] = to_bf16(pattern(r, o + j, amp_));
      });
      auto* dst = static_cast<std::uint16_t*>(in[static_cast<std::size_t>(r)]) + o;
      // On the rank's GPU, whose legacy stream the synchronize below waits for.
      if (cudaSetDevice(ranks.device(r)) != cudaSuccess ||
          cudaMemcpy(dst, staging_, len * sizeof(std::uint16_t), cudaMemcpyHostToDevice) != cudaSuccess) {
        res.error = "copying inputs to the device failed";
        return res;
      }
    }
  }
  // A pageable copy may return before its DMA ends, and the ranks' streams do not wait for the
  // legacy stream.
  if (!ranks.synchronize()) {
    res.error = "copying inputs to the device failed";
    return res;
  }
  if (std::string e = run_once(ranks, c, s, in, out); !e.empty()) {
    res.error = "eager call: " + e;
    return res;
  }
  res.ran = true;

  // Outputs, a chunk of every checked rank at a time, so that a reference value shared by all
  // ranks is computed once.
  const std::vector<int> checked = checked_ranks(c, n_);
  const std::size_t out_elems = s.out_bytes / sizeof(std::uint16_t);
  const bool shared = same_for_every_rank(c);
  std::mutex mu;
  Bad first;
  for (std::size_t o = 0; o < out_elems; o += slot_elems_) {
    const std::size_t len = std::min(slot_elems_, out_elems - o);
    for (std::size_t i = 0; i < checked.size(); ++i) {
      const auto* src = static_cast<const std::uint16_t*>(out[static_cast<std::size_t>(checked[i])]) + o;
      if (cudaSetDevice(ranks.device(checked[i])) != cudaSuccess ||
          cudaMemcpy(slot(static_cast<int>(i)), src, len * sizeof(std::uint16_t), cudaMemcpyDeviceToHost) !=
              cudaSuccess) {
        res.ran = false;
        res.error = "copying outputs to the host failed";
        return res;
      }
    }
    parallel_for(len, [&](std::size_t b, std::size_t e) {
      std::size_t wrong = 0;
      Bad mine;
      std::size_t q = (o + b) / s.count, rem = (o + b) % s.count;
      for (std::size_t j = b; j < e; ++j) {
        const std::size_t idx = o + j;
        const int common = shared ? ref.at(0, idx, q, rem) : 0;
        for (std::size_t i = 0; i < checked.size(); ++i) {
          const int r = checked[i];
          const int want = shared ? common : ref.at(r, idx, q, rem);
          const float got = from_bf16(slot(static_cast<int>(i))[j]);
          if (got == static_cast<float>(want)) continue;
          ++wrong;
          if (const Bad bad{r, idx, want, got}; bad.before(mine)) mine = bad;
        }
        if (++rem == s.count) {
          rem = 0;
          ++q;
        }
      }
      const std::lock_guard<std::mutex> lock(mu);
      res.wrong += wrong;
      if (mine.rank >= 0 && mine.before(first)) first = mine;
    });
  }
  if (first.rank >= 0) {
    char line[160];
    std::snprintf(line, sizeof line, "rank %d, element %zu: expected %d, got %g", first.rank, first.index,
                  first.want, static_cast<double>(first.got));
    res.first_bad = line;
  }
  return res;
}

}  // namespace purlin::snac_bench
