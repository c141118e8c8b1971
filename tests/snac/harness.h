// Host harness for SNAC: runs one collective on a HostWorld (ranks as thread groups, workers as
// CTAs) for several consecutive calls on the same protocol state, and compares every rank's
// whole output buffer, guard bytes included, with a reference written from NCCL's semantics.
//
// Each call gets fresh random inputs and its own output buffer, placed at a different byte
// misalignment per (call, rank), so one run checks three launches (both staging halves, then
// the first one again) without resetting anything in between.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "reference.h"
#include "snac/host_world.h"

namespace purlin::snac::test {

// Writes expected elements into a byte image of an output buffer (any alignment).
template <class E>
class Expected {
 public:
  explicit Expected(std::byte* at) : at_(at) {}
  void set(std::size_t i, E v) const { std::memcpy(at_ + i * sizeof(E), &v, sizeof(E)); }

 private:
  std::byte* at_;
};

struct InPlace {
  bool output_inside_input = false;  // ReduceScatter, Scatter; otherwise the input is inside
  std::size_t at = 0;                // elements
};

// Op is part of the spec so that the engine runs the reduction the reference computes.
template <class C, class E, class Op = op::Sum>
struct Spec {
  int ranks = 1;
  std::function<std::size_t(int)> in_elems;
  std::function<std::size_t(int)> out_elems;
  std::function<Args<C, E>(int)> args;  // shapes, root, agreed maximum; pointers are set here
  // NCCL's in-place convention for rank r: the smaller buffer lies `at` elements into the
  // larger one; nullopt: no in-place form for that rank.
  std::function<std::optional<InPlace>(int)> in_place;
  // Writes rank r's expected output elements; positions it does not set must stay untouched.
  std::function<void(int, const std::vector<std::vector<E>>&, const Expected<E>&)> expect;
};

struct RunSetup {
  Regime regime = Regime::throughput;
  bool zero_copy = false;  // throughput: consumers read producers' inputs, not their staging
  int team = 1;
  bool one_hop = true;  // latency: compositions in one hop where it fits, else two
  bool in_place = false;
  int calls = 3;
  std::uint64_t seed = 1;
  std::size_t chunk_bytes = 64;
  // Throughput: a worker budget split over the role groups (Policy::throughput_workers; 0:
  // the fixed roles below) and, with it, per-rank roles for rooted compositions.
  int workers = 0;
  bool rank_roles = false;
  bool spread_teams = true;  // Policy::spread_teams
};

// Small chunks and a staging area of two slots per half (capacity 4), so that payloads of a few
// hundred bytes already cross chunk boundaries and wrap the ring (drain acks); latency chunks of
// 48 bytes (6 packets) split every partition into several pushes.
inline Policy test_policy(const RunSetup& s) {
  Policy p;
  p.chunk_bytes = s.chunk_bytes;
  p.packet_chunk_bytes = 48;
  p.latency_max_bytes = s.regime == Regime::latency ? std::numeric_limits<std::size_t>::max() : 0;
  p.one_hop_max_bytes = s.one_hop ? std::numeric_limits<std::size_t>::max() : 0;
  p.throughput = s.team == 1 ? Roles{2, 2, 2, 1} : Roles{2, 4, 2, 2};
  p.latency = s.team == 1 ? Roles{1, 2, 1, 1} : Roles{2, 2, 2, 2};
  p.zero_copy = s.zero_copy;
  p.throughput_workers = s.workers;
  p.rank_roles_min_bytes = s.rank_roles ? 1 : 0;
  p.spread_teams = s.spread_teams;
  return p;
}

inline HostWorldConfig test_world(int ranks, std::uint32_t slots = 4) {
  HostWorldConfig c;
  c.ranks = ranks;
  c.staging_bytes = 2 * 2 * static_cast<std::size_t>(ranks + 1) * 64;
  c.slots = slots;
  c.packet_capacity = 2048;  // the largest test partition: 1201 x 8 bytes
  c.workers = 8;
  c.timeout = std::chrono::milliseconds(20000);
  return c;
}

inline constexpr std::size_t kGuard = 32;
inline constexpr std::byte kSentinel{0xA5};

// One call of one collective on every rank, with its buffers and expected results; type-erased
// so that a sequence of different collectives can run on one world.
class Call {
 public:
  virtual ~Call() = default;
  virtual Status launch(const HostWorld& world, int rank, const HostBackend& be) const = 0;
  virtual PlanResult plan(const HostWorld& world) const = 0;
  // The most workers any rank's plan launches: roles may differ between ranks (planner.h).
  virtual int workers(const HostWorld& world) const = 0;
  virtual Regime wanted_regime() const = 0;
  // Adds a test failure for the first rank whose buffers differ from the reference.
  virtual void verify(int index) const = 0;
  // Overwrites rank r's out-of-place input, as an application may once the call returned.
  virtual void clobber_input(int rank) = 0;
};

template <class C, class E, class Op>
class PreparedCall final : public Call {
 public:
  PreparedCall(const Spec<C, E, Op>& spec, const RunSetup& setup, std::uint64_t seed)
      : spec_(spec), setup_(setup), policy_(test_policy(setup)), ranks_(spec.ranks) {
    std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(spec.ranks));
    bufs_.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) prepare(spec, r, seed, rng);
    std::vector<std::vector<E>> inputs;
    for (const Buffers& b : bufs_) inputs.push_back(b.in_values);
    for (int r = 0; r < ranks_; ++r) {
      Buffers& b = bufs_[static_cast<std::size_t>(r)];
      b.want_home = b.home;
      const auto out_at = static_cast<const std::byte*>(b.args.output) - b.home.data();
      spec.expect(r, inputs, Expected<E>(b.want_home.data() + out_at));
    }
  }

  Status launch(const HostWorld& world, int rank, const HostBackend& be) const override {
    return host_launch<C, E, Op>(be, world.handle(rank), policy_,
                                 bufs_[static_cast<std::size_t>(rank)].args);
  }
  PlanResult plan(const HostWorld& world) const override {
    return make_plan(policy_, world.handle(0), bufs_[0].args);
  }
  int workers(const HostWorld& world) const override {
    int most = 1;
    for (std::size_t r = 0; r < bufs_.size(); ++r) {
      const PlanResult p = make_plan(policy_, world.handle(static_cast<int>(r)), bufs_[r].args);
      most = std::max(most, p.plan.workers());
    }
    return most;
  }
  Regime wanted_regime() const override { return setup_.regime; }
  void clobber_input(int rank) override {
    Buffers& b = bufs_[static_cast<std::size_t>(rank)];
    std::fill(b.in.begin(), b.in.end(), std::byte{0xEE});
    b.want_in = b.in;
  }

  void verify(int index) const override {
    for (int r = 0; r < ranks_; ++r) {
      const Buffers& b = bufs_[static_cast<std::size_t>(r)];
      EXPECT_TRUE(b.in == b.want_in) << "call " << index << " rank " << r << ": input was written";
      if (b.home == b.want_home) continue;
      std::size_t first = 0;
      while (b.home[first] == b.want_home[first]) ++first;
      ADD_FAILURE() << "call " << index << " rank " << r << ": output differs from the reference "
                    << "first at buffer byte " << first << " (guard " << kGuard << ", element size "
                    << sizeof(E) << "): got " << static_cast<int>(b.home[first]) << ", want "
                    << static_cast<int>(b.want_home[first]);
      return;
    }
  }

 private:
  static constexpr std::size_t es = sizeof(E);

  struct Buffers {
    std::vector<E> in_values;
    std::vector<std::byte> home;  // the output's allocation (in place: the larger buffer)
    std::vector<std::byte> in;    // out-of-place input
    std::vector<std::byte> want_home;
    std::vector<std::byte> want_in;  // inputs are never written
    Args<C, E> args;
  };

  // Buffers start at a different misalignment per (call, rank); the input's differs from the
  // output's, so the Atom's realignment paths run under the protocol.
  void prepare(const Spec<C, E, Op>& spec, int r, std::uint64_t seed, std::mt19937_64& rng) {
    Buffers& b = bufs_[static_cast<std::size_t>(r)];
    const std::size_t skew =
        static_cast<std::size_t>(seed * 5 + static_cast<std::size_t>(r) * 3) % 16;
    const std::size_t in_bytes = spec.in_elems(r) * es;
    const std::size_t out_bytes = spec.out_elems(r) * es;
    b.in_values.resize(spec.in_elems(r));
    for (E& v : b.in_values) v = random_element<E>(rng);
    const std::optional<InPlace> ip = setup_.in_place ? spec.in_place(r) : std::nullopt;
    std::byte* in = nullptr;
    std::byte* out = nullptr;
    if (ip.has_value()) {
      const bool out_inside = ip->output_inside_input;
      b.home.assign(2 * kGuard + (out_inside ? in_bytes : out_bytes), kSentinel);
      std::byte* base = b.home.data() + kGuard + skew;
      in = out_inside ? base : base + ip->at * es;
      out = out_inside ? base + ip->at * es : base;
    } else {
      b.home.assign(2 * kGuard + out_bytes, kSentinel);
      b.in.assign(2 * kGuard + in_bytes, kSentinel);
      out = b.home.data() + kGuard + skew;
      in = b.in.data() + kGuard + (skew + 7) % 16;
    }
    if (in_bytes != 0) std::memcpy(in, b.in_values.data(), in_bytes);
    b.want_in = b.in;
    b.args = spec.args(r);
    b.args.input = in;
    b.args.output = out;
    // The same on every rank, as a bridge-made one is: every run checks that matching calls
    // never report a mismatch (fingerprint.h).
    b.args.fingerprint = Fingerprint::make(0, static_cast<int>(sizeof(E)), 0, b.args.root, 1);
  }

  Spec<C, E, Op> spec_;  // its lambdas own the V count arrays the shapes point into
  RunSetup setup_;
  Policy policy_;
  int ranks_;
  std::vector<Buffers> bufs_;
};

template <class C, class E, class Op>
std::unique_ptr<Call> prepare(const Spec<C, E, Op>& spec, const RunSetup& setup,
                              std::uint64_t seed) {
  return std::make_unique<PreparedCall<C, E, Op>>(spec, setup, seed);
}

// Runs the calls back to back on `world` (no host synchronization between them) and checks
// each one's regime and results.
inline void run_calls(HostWorld& world, const std::vector<std::unique_ptr<Call>>& calls) {
  int threads = 1;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const PlanResult planned = calls[i]->plan(world);
    ASSERT_EQ(planned.status, Status::ok) << "call " << i;
    ASSERT_EQ(planned.plan.regime, calls[i]->wanted_regime()) << "call " << i;
    threads = std::max(threads, calls[i]->workers(world));
  }
  const Status status = world.run(
      static_cast<int>(calls.size()),
      [&](int r, int i, const HostBackend& be) {
        return calls[static_cast<std::size_t>(i)]->launch(world, r, be);
      },
      threads);
  ASSERT_EQ(status, Status::ok) << world.control().report();
  for (std::size_t i = 0; i < calls.size(); ++i) calls[i]->verify(static_cast<int>(i));
}

// `setup.calls` calls of one spec, each with fresh inputs, continuing on `world`'s state.
template <class C, class E, class Op>
void run_spec(HostWorld& world, const Spec<C, E, Op>& spec, const RunSetup& setup) {
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < setup.calls; ++i) {
    calls.push_back(prepare(spec, setup, setup.seed * 16 + static_cast<std::uint64_t>(i)));
  }
  run_calls(world, calls);
}

template <class C, class E, class Op>
void run_spec(const Spec<C, E, Op>& spec, const RunSetup& setup) {
  HostWorld world(test_world(spec.ranks));
  run_spec(world, spec, setup);
}

}  // namespace purlin::snac::test
