// Call fingerprints: mismatch detection between ranks (issue 13). Ranks that call different
// collectives, counts, types, ops or roots run different kernel instances and plans, and would
// hang or compute garbage; what every instance shares is the packet buffer. So each launch
// starts by pushing its call's fingerprint into every peer's buffer as one packet (flag: the
// launch's packet flag, so the epoch is the call's sequence number), and
//  - a consumer, when it is done with a launch, confirms the fingerprint of every producer it
//    read from: the producer's consumer workers stored it when its launch started (waited for
//    if not there yet), and it must equal its own;
//  - a wait that lingers checks every peer's fingerprint each time it checks the abort word,
//    so a rank starved by a peer that called something else ends as soon as that peer starts.
// A fingerprint with a later flag is a peer already past this call: nothing to compare. Either
// way out records both fingerprints (the backend's report: both ranks' calls) and the launch
// ends with Status::mismatch.
//
// Device cost per launch: one 16-byte store per peer (spread over the consumer workers'
// threads), one 16-byte load per producer per consumer worker at launch start (spread over
// its lanes; a look that came too early is repeated at the end) and one barrier predicate;
// inside waits, ranks 16-byte loads per check_every polls.
#pragma once

#include <cstdint>
#include <cstdio>

#include "layout/collective.h"
#include "layout/flags.h"
#include "layout/host_device.h"
#include "snac/handle.h"
#include "snac/plan.h"

namespace purlin::snac {

// What every rank of a call agrees on, in one word (0: the call carries none and is not
// checked). The launch bridge fills it from NCCL's call (launch/args.h): the collective's
// index, the ncclDataType_t, the op (0 for copies), the root (0 when unrooted) and the count
// every rank passes (0 for V collectives, whose counts legitimately differ per rank). Counts
// wider than the field are folded, so two counts may collide only 2^45 elements apart.
struct Fingerprint {
  static constexpr int kCountBits = 45;
  static constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;

  PURLIN_HD static constexpr std::uint64_t make(int collective, int type, int op, int root,
                                                std::uint64_t count) {
    const std::uint64_t folded = (count ^ (count >> kCountBits)) & kCountMask;
    return std::uint64_t{1} << 63 | (static_cast<std::uint64_t>(collective) & 0xf) << 59 |
           (static_cast<std::uint64_t>(type) & 0xf) << 55 |
           (static_cast<std::uint64_t>(op) & 0x7) << 52 |
           (static_cast<std::uint64_t>(root) & 0x7f) << kCountBits | folded;
  }
  PURLIN_HD static constexpr int collective(std::uint64_t f) { return static_cast<int>(f >> 59 & 0xf); }
  PURLIN_HD static constexpr int type(std::uint64_t f) { return static_cast<int>(f >> 55 & 0xf); }
  PURLIN_HD static constexpr int op(std::uint64_t f) { return static_cast<int>(f >> 52 & 0x7); }
  PURLIN_HD static constexpr int root(std::uint64_t f) { return static_cast<int>(f >> kCountBits & 0x7f); }
  PURLIN_HD static constexpr std::uint64_t count(std::uint64_t f) { return f & kCountMask; }
};

// Names of the collectives in the order of launch::Collective (launch/call.h asserts it).
inline constexpr const char* kCollectiveNames[] = {
    "AllGather", "AllGatherV", "ReduceScatter", "ReduceScatterV", "AllToAll", "AllToAllV",
    "Scatter",   "Gather",     "AllReduce",     "Broadcast",      "Reduce"};
inline constexpr int kFingerprintCollectives = sizeof(kCollectiveNames) / sizeof(kCollectiveNames[0]);

// "AllReduce(type 7, op 0, root 0, count 1024)", for a report naming both ranks' calls.
inline int describe_call(char* out, std::size_t size, std::uint64_t f) {
  const int c = Fingerprint::collective(f);
  return std::snprintf(out, size, "%s(type %d, op %d, root %d, count %llu)",
                       c < kFingerprintCollectives ? kCollectiveNames[c] : "collective?",
                       Fingerprint::type(f), Fingerprint::op(f), Fingerprint::root(f),
                       static_cast<unsigned long long>(Fingerprint::count(f)));
}

// One launch's view of the fingerprints in this rank's packet buffer: the launch's half,
// the packet flag that marks this call, and this rank's own fingerprint.
struct FingerprintWatch {
  // The packet buffers by rank (Handle::packets; null: nothing to check). The watch keeps the
  // table, not this rank's entry: every thread stores a copy of the watch (the backend's, for
  // lingering waits) when the launch starts, and storing a loaded entry would hold each of them
  // for a round trip. CallCheck gets the entry from the engine, which loads it anyway.
  const Packet* const* packets = nullptr;
  PacketLayout pk{};
  unsigned half = 0;
  Flag flag = 0;
  std::uint64_t own = 0;
  int self = 0;

  PURLIN_HD bool active() const { return packets != nullptr && own != 0; }
  PURLIN_HD const Packet* of(int peer) const { return packets[self] + pk.fingerprint(half, peer); }

  // Whether what peer's fingerprint packet held (`flag_seen`, `theirs`) shows a different call
  // at this launch: only a fingerprint of this very launch compares.
  PURLIN_HD bool differs(Flag flag_seen, std::uint64_t theirs) const {
    return flag_seen == flag && theirs != own;
  }
};

namespace detail {

// The ranks (bit per rank) that output regions of Q on `rank` read from; OneHop: a
// composition's regions straight from its inputs (layout compose::one_hop_source).
template <class Q, bool OneHop>
PURLIN_HD std::uint64_t sources_of(int rank, int ranks, int root) {
  if (!Q::is_consumer(rank, root)) return 0;
  const std::uint64_t all = ~std::uint64_t{0} >> (64 - ranks);
  std::uint64_t m = 0;
  for (int k = 0; k < ranks; ++k) {
    if (!Q::Output::holds(rank, k)) continue;
    int source = 0;
    if constexpr (OneHop) {
      source = Q::one_hop_source(rank, k, root).rank;
    } else {
      source = Q::source(rank, k, root).rank;
    }
    m |= source == layout::kAllRanks ? all : std::uint64_t{1} << source;
  }
  return m;
}

}  // namespace detail

// The ranks whose data a worker of role group `group` reads in a launch of C (plan.h: Role).
template <class C>
PURLIN_HD std::uint64_t producers_of(int group, bool one_hop, int rank, int ranks, int root) {
  if constexpr (C::phases == 2) {
    if (group == 1 && one_hop) return detail::sources_of<C, true>(rank, ranks, root);
    if (group == 2) return detail::sources_of<typename C::Last, false>(rank, ranks, root);
  }
  return group == 1 ? detail::sources_of<typename C::First, false>(rank, ranks, root) : 0;
}

// Stores this rank's fingerprint into the buffers of peers first, first + step, ...: the
// announcing workers of a launch share the peers, a peer per thread, and store before their
// role's work.
template <class B>
PURLIN_HD void announce(const B& be, const Handle& h, const FingerprintWatch& w, int first, int step) {
  if (!w.active()) return;
  for (int q = first + step * be.lane(); q < h.ranks; q += step * be.lanes()) {
    be.put_packet(h.packets[q] + w.pk.fingerprint(w.half, w.self), w.own, w.flag);
  }
}

// A peer of the watched launch that runs another call, or -1 (theirs: its fingerprint): the
// check a lingering wait makes (backends' Waiter and Pacer).
template <class B>
PURLIN_HD int find_mismatch(const B& be, const FingerprintWatch& w, std::uint64_t& theirs) {
  if (!w.active()) return -1;
  for (int q = 0; q < w.pk.ranks; ++q) {
    const Packet seen = be.load_packet(w.of(q));
    if (w.differs(seen.flag, seen.payload)) {
      theirs = seen.payload;
      return q;
    }
  }
  return -1;
}

// This lane's first look at the fingerprint of peer `lane` in `mine` (this rank's packet
// buffer), taken when the launch starts so that, where the peer announced already, confirm()
// has nothing left to load.
template <class B>
PURLIN_HD Packet look(const B& be, const FingerprintWatch& w, const Packet* mine) {
  const int q = be.lane();
  return w.active() && q < w.pk.ranks ? be.load_packet(mine + w.pk.fingerprint(w.half, q))
                                      : Packet{};
}

// Every rank in `producers` runs this call, as far as its fingerprint says: waited for with
// the waits' way out (every producer announced before anything this worker read), one
// producer per lane, from `seen` (look()) where that held this launch's already. `mine`: this
// rank's packet buffer. False, on every lane, when one differs or a wait gave up.
template <class B>
PURLIN_HD bool confirm(const B& be, const FingerprintWatch& w, std::uint64_t producers,
                       const Packet* mine, Packet seen) {
  bool ok = true;
  if (w.active()) {
    for (int q = be.lane(); q < w.pk.ranks && ok; q += be.lanes()) {
      if (((producers >> q) & 1u) == 0) continue;
      const Packet* at = mine + w.pk.fingerprint(w.half, q);
      if (q != be.lane() || seen.flag < w.flag) {
        ok = be.poll(
            [&] {
              seen = be.load_packet(at);
              return seen.flag >= w.flag;
            },
            &at->flag, w.flag);
      }
      if (ok && w.differs(seen.flag, seen.payload)) ok = be.mismatch(q, seen.payload);
    }
  }
  return be.sync_and(ok);
}

// One worker's fingerprint check of one launch, as the engine runs it: constructed when the
// launch starts (watch; a consumer also announces and looks), finish() when its role's work is
// done. Only consumers (role group 1 and on) announce, spread over them: a stager's first
// barrier would otherwise wait for an announcing leader's table lookup and store, on every
// call's critical path, while consumers spend that time waiting for data anyway.
template <class B>
class CallCheck {
 public:
  // `mine`: this rank's packet buffer (h.packets[h.rank]), which the engine looked up already.
  PURLIN_HD CallCheck(const B& be, const Handle& h, const Packet* mine, unsigned half, Flag flag,
                      std::uint64_t own, const Plan& plan, int worker)
      : be_(be), w_{h.packets, h.packet_layout(), half, flag, own, h.rank}, mine_(mine) {
    be.watch(w_);
    const int stagers = plan.group_size(0);
    if (worker >= stagers) {
      announce(be, h, w_, worker - stagers, plan.workers() - stagers);
      seen_ = look(be, w_, mine_);
    }
  }

  // A consumer about to wait for its producers' data looks again where its first look came too
  // early (the peer had not announced yet): the load's round trip overlaps that wait, and
  // finish() has nothing left to load for a peer that announced by then (1-3% per call at
  // 1-32 KiB: perf/snac/results/h100-20261207-roles, r18/table_lab.txt).
  PURLIN_HD void look_again() {
    if (seen_.flag < w_.flag) seen_ = look(be_, w_, mine_);
  }

  // The launch's status once a worker that read from `producers` is done: a consumer's
  // producers confirmed, and an abort that a mismatch caused named as such.
  PURLIN_HD Status finish(Status s, std::uint64_t producers) const {
    if (s == Status::ok && producers != 0 && !confirm(be_, w_, producers, mine_, seen_)) {
      s = Status::aborted;
    }
    return s == Status::aborted && be_.mismatched() ? Status::mismatch : s;
  }

 private:
  const B& be_;
  FingerprintWatch w_;
  const Packet* mine_;  // this rank's packet buffer, w_.packets[w_.self] (see FingerprintWatch)
  Packet seen_{};
};

}  // namespace purlin::snac
