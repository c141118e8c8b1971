// SNAC: Stage, Notify, And Consume (DESIGN §2), written once for every collective and both
// regimes, and run by every worker (CTA, or host thread) of every rank.
//
// Roles, by group (plan.h): stagers copy (throughput) or push (latency) chunks of the input;
// consumers of phase 0 pull/poll and copy or reduce them, into the output or, in a composition,
// into the intermediate, which they publish in turn; consumers of phase 1 (a composition's
// third group) consume that. Every branch below is on a layout trait (if constexpr) or on the
// plan; nothing names a collective.
//
// Why it cannot deadlock (all workers are co-resident; each handles its items in increasing
// chunk ordinal): an item of ordinal c waits only for flags of ordinal c, for acks of ordinal
// c - slots, and for half releases, which every rank writes unconditionally when a launch
// starts. Flags of c come from items of ordinal c that wait only on smaller ordinals and
// releases, so by induction over c every item completes. Zero-copy stagers then wait for acks
// of their own published ordinals (await_input_read); those come from consumer items, which
// by the induction all complete, and no item waits on a stager's end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/chunking.h"
#include "layout/collective.h"
#include "layout/flags.h"
#include "layout/host_device.h"
#include "snac/backend.h"
#include "snac/fingerprint.h"
#include "snac/handle.h"
#include "snac/packets.h"
#include "snac/plan.h"
#include "snac/relations.h"

namespace purlin::snac {

template <class C, class E, class Op, class B>
class Engine {
  using Prog = Program<C>;
  using F = typename Prog::F;
  using G = typename Prog::G;
  static constexpr std::size_t es = sizeof(E);
  static constexpr int kLast = Prog::phases - 1;

 public:
  PURLIN_HD Engine(const B& be, const Handle& h, const Plan& plan, const Args<C, E>& args)
      : be_(be),
        h_(h),
        plan_(plan),
        a_(args),
        r_(h.rank),
        n_(h.ranks),
        sig_(h.signal_layout()),
        pk_(h.packet_layout()),
        ctr_(h.counter_layout()),
        rel_(args, plan, h.rank, h.ranks),
        signals_(h.signals[h.rank]),
        packets_(h.packets != nullptr ? h.packets[h.rank] : nullptr) {}

  PURLIN_HD Status run() {
    const int w = be_.worker();
    const int workers = plan_.workers();
    e_ = h_.epochs[w];
    half_ = layout::staging_half(e_);
    zero_copy_ = rel_.publishes_input();
    be_.mark(TracePoint::entry, e_, 0);
    look_released();
    release_other_half(w, workers);
    be_.mark(TracePoint::released, e_, 0);
    CallCheck<B> check(be_, h_, packets_, half_, layout::packet_flag(e_), a_.fingerprint, plan_, w);

    const Role role = plan_.role(w);
    be_.mark(TracePoint::group, e_, static_cast<std::uint64_t>(role.group));
    be_.mark(TracePoint::checked, e_, 0);
    Status s = Status::ok;
    if (role.group == 0) {
      s = stage(role);
    } else if (role.group == 1) {
      s = plan_.one_hop ? consume_one_hop(role, check) : consume<0>(role, check);
    } else if constexpr (Prog::composed) {
      s = consume<1>(role, check);
    }
    be_.mark(TracePoint::worked, e_, 0);
    s = check.finish(s, producers_of<C>(role.group, plan_.one_hop, r_, n_, a_.root));
    be_.mark(TracePoint::done, e_, 0);

    // Every slot, including those of workers this launch does not have, advances: the next
    // launch may use more workers and each reads its own slot.
    be_.sync();
    if (be_.leader()) {
      const Epoch next = layout::next_epoch(e_, plan_.ordinals);
      for (int j = w; j < h_.epoch_slots; j += workers) h_.epochs[j] = next;
    }
    be_.mark(TracePoint::exit, e_, 0);
    return s;
  }

 private:
  // Item i of a loop over `width` items per chunk ordinal: its ordinal and its region. The first
  // `width` items take no division (layout::detail::quotient), which is all a latency launch has.
  PURLIN_HD static std::uint64_t item_ordinal(std::uint64_t i, int width) {
    return layout::detail::quotient(i, static_cast<std::uint64_t>(width));
  }
  PURLIN_HD static int item_region(std::uint64_t i, int width) {
    return static_cast<int>(layout::detail::remainder(i, static_cast<std::uint64_t>(width)));
  }

  // ---- Places (who reads what: relations.h) ------------------------------------------------
  // Start of chunk c of input partition `partition` of `phase` in rank j's staging.
  PURLIN_HD std::byte* slot(int j, std::uint64_t c, int phase, int partition) const {
    return h_.staging[j] + layout::staging_half(e_) * plan_.half_bytes +
           static_cast<std::size_t>(plan_.ring.slot(c)) * plan_.ring.slot_bytes +
           static_cast<std::size_t>(Prog::stride_index(phase, partition, n_)) *
               plan_.chunking.stride;
  }

  PURLIN_HD std::byte* scratch(int area) const {
    return h_.scratch + static_cast<std::size_t>(area) * pk_.max_bytes();
  }

  // ---- Signals ----------------------------------------------------------------------------

  // Entering this launch proves this rank finished every read of the other half (stream
  // order), so it tells each producer that half is free for the launch after this one. Spread
  // over the workers and their lanes, one store per thread. The reads it vouches for belong to
  // earlier launches, which the kernel boundary completed, so the store needs no release fence
  // (backend.h: store_after_launches); one fenced store per worker leader cost each launch's
  // pushers about 0.9 us (perf/snac/results/h100-20261206-trace). No wait, so it cannot block
  // anyone.
  PURLIN_HD void release_other_half(int w, int workers) const {
    const Flag value = layout::drain_release_value(e_, plan_.ordinals);
    const int step = workers * be_.lanes();
    for (int q = w + workers * be_.lane(); q < n_; q += step) {
      be_.store_after_launches(h_.signals[q] + sig_.release(r_, half_ ^ 1u), value);
    }
  }

  // Each lane's first look at the release word of its peer (lane q: peer q), taken when the
  // launch starts so that its round trip overlaps the worker's setup; wait_released waits
  // only where the look found the word short.
  PURLIN_HD void look_released() {
    const int q = be_.lane();
    if (q < n_) seen_release_ = be_.load_acquire(signals_ + sig_.release(q, half_));
  }

  // First use of this launch's half: every peer released it (it finished the launch two back).
  // Called by every lane, each waiting for its share of the peers, so the n loads are issued
  // at once rather than one after another; the caller's sync_and joins them (an acquire by
  // any lane followed by the barrier orders the worker's later stores, backend.h).
  PURLIN_HD bool wait_released() {
    if (released_) return true;
    for (int q = be_.lane(); q < n_; q += be_.lanes()) {
      if (q == be_.lane() && seen_release_ >= e_) continue;
      if (!be_.wait_at_least(signals_ + sig_.release(q, half_), e_)) return false;
    }
    released_ = true;
    return true;
  }

  // Before staging ordinal c of partition k: the slot's previous occupant was drained, every
  // reader having acknowledged the ordinal that used c's slot before it (c >= ring slots).
  // Like wait_released, each lane waits for its share of the readers, so the n loads are in
  // flight together (a leader waiting for one reader after another took n round trips per
  // chunk), and the barrier joins them (backend.h).
  PURLIN_HD bool drain_wait(int phase, int k, std::uint64_t c) {
    bool ok = true;
    if (c < plan_.ring.slots) {
      ok = wait_released();
    } else {
      const Flag want = layout::drain_wait_value(e_, c, plan_.ring.slots);
      const std::uint64_t s = plan_.ring.slot(c);
      for (int q = be_.lane(); q < n_ && ok; q += be_.lanes()) {
        ok = !rel_.reads(phase, k, q) ||
             be_.wait_at_least(signals_ + sig_.ack(phase, q, half_, s), want);
      }
    }
    return be_.sync_and(ok);
  }

  // Team arrival, on every lane: true for the team's last worker to finish chunk c. The leader
  // counts in after the barrier, so its release covers all the worker's lanes (before it, a
  // last worker could publish while another's lanes still wrote: h100-20261207-teams). The
  // last zeroes the counter; its next chunk starts only once this publication was acked.
  PURLIN_HD bool last_of_team(CounterKind kind, int phase, int k, std::uint64_t c, int team) const {
    be_.sync();
    if (team == 1) return true;
    bool last = false;
    if (be_.leader()) {
      std::uint64_t* counter = h_.counters + ctr_.index(kind, phase, k, plan_.ring.slot(c));
      last = be_.fetch_add(counter, 1) + 1 == static_cast<std::uint64_t>(team);
      if (last) be_.store_relaxed(counter, 0);
    }
    return be_.sync_and(!be_.leader() || last);
  }

  // A staged first-phase flag also says that the chunk lies in the staging slot: a zero
  // address (SignalLayout::input_address) where the plan reads inputs in place, which its
  // release store publishes (publish_input_pair writes the address instead). The calling
  // threads take the readers lane, lane + lanes, ...: all lanes of a worker after a barrier,
  // so that the n release stores do not queue behind one another (and any lane's release
  // after the barrier publishes the whole worker's stores, backend.h).
  PURLIN_HD void publish(int phase, int k, std::uint64_t c, int lane, int lanes) const {
    const std::uint64_t s = plan_.ring.slot(c);
    const Flag value = layout::flag_value(e_, c);
    for (int q = lane; q < n_; q += lanes) {
      if (!rel_.reads(phase, k, q)) continue;
      if (phase == 0 && plan_.zero_copy) {
        be_.store_relaxed(h_.signals[q] + sig_.input_address(r_, half_), 0);
      }
      be_.store_release(h_.signals[q] + sig_.flag(phase, r_, s), value);
    }
  }

  // ---- Stage ------------------------------------------------------------------------------

  PURLIN_HD Status stage(const Role& role) {
    if (!F::is_producer(r_, a_.root) || rel_.own_partitions()) return Status::ok;
    be_.mark(TracePoint::item, e_, 0);
    const int width = F::Input::regions(n_);
    const std::uint64_t items = plan_.ordinals * static_cast<std::uint64_t>(width);
    if (zero_copy_) return publish_input(role, width, items);
    for (std::uint64_t i = role.team; i < items; i += role.teams) {
      const std::uint64_t c = item_ordinal(i, width);
      const int k = rel_.staged_partition(i, width);
      const Status s = stage_item(role, k, c);
      if (s != Status::ok) return s;
    }
    return Status::ok;
  }

  // Zero-copy: nothing to copy, so the first member's lanes publish the team's items (those a
  // copying stager would have, i = team mod teams) as (item, reader) pairs, one pair per lane:
  // the release stores of one warp instruction share one fence, where a thread publishing to
  // its readers one after another paid a fence each, about 0.6 us apiece with 8 ranks
  // (perf/snac/results/h100-20261207-teams, r21 trace: readers saw an AllGather's flags in
  // rank order). A pair waits only for its own reader's ack of the chunk that used its slot
  // before, a pair earlier in the team's order (or another team's); each lane takes its pairs
  // in that order, so the earliest unpublished pair waits for nothing unpublished (the
  // induction above), and each lane goes at its own pace (one that waits holds no other).
  PURLIN_HD Status publish_input(const Role& role, int width, std::uint64_t items) {
    if (!be_.sync_and(wait_released())) return Status::aborted;
    const bool ok = for_team_pairs(role, width, items, [&](std::uint64_t c, int k, int q) {
      return publish_input_pair(c, k, q);
    });
    if (!be_.sync_and(ok)) return Status::aborted;
    be_.mark(TracePoint::push, e_, 0);
    return await_input_read(role, width, items);
  }

  // On every lane of the team's first member (others: true): f(c, k, q) for the team's
  // (item, reader) pairs, item i = team, team + teams, ... of a group's `items` (ordinal c,
  // input partition k) times each rank q, a lane's pairs in that order, until f is false.
  template <class Pair>
  PURLIN_HD bool for_team_pairs(const Role& role, int width, std::uint64_t items, Pair&& f) const {
    if (role.member != 0) return true;
    const auto team = static_cast<std::uint64_t>(role.team);
    const auto teams = static_cast<std::uint64_t>(role.teams);
    const auto n = static_cast<std::uint64_t>(n_);
    const std::uint64_t pairs = (items > team ? (items - team + teams - 1) / teams : 0) * n;
    bool ok = true;
    for (std::uint64_t p = static_cast<std::uint64_t>(be_.lane()); p < pairs && ok;
         p += static_cast<std::uint64_t>(be_.lanes())) {
      const std::uint64_t i = team + teams * (p / n);
      ok = f(item_ordinal(i, width), rel_.staged_partition(i, width), static_cast<int>(p % n));
    }
    return ok;
  }

  // Chunk c of input partition k to reader q, if q reads it: once q acknowledged the chunk
  // before it on the slot, the chunk's address, then its flag (a release, which publishes the
  // address). False when that wait gave up.
  PURLIN_HD bool publish_input_pair(std::uint64_t c, int k, int q) const {
    const layout::Region part = rel_.input_region(k);
    if (c >= plan_.chunking.count(part.size) || !rel_.reads(0, k, q)) return true;
    const std::uint64_t s = plan_.ring.slot(c);
    if (c >= plan_.ring.slots &&
        !be_.wait_at_least(signals_ + sig_.ack(0, q, half_, s),
                           layout::drain_wait_value(e_, c, plan_.ring.slots))) {
      return false;
    }
    be_.store_relaxed(h_.signals[q] + sig_.input_address(r_, half_),
                      reinterpret_cast<std::uintptr_t>(static_cast<const std::byte*>(a_.input) +
                                                       part.offset));
    be_.store_release(h_.signals[q] + sig_.flag(0, r_, s), layout::flag_value(e_, c));
    return true;
  }

  // Zero-copy: the launch may end only when every reader acknowledged every chunk of this
  // rank's input that this team published. Acks on one slot grow with the ordinal and a
  // reader's chunks on a slot were published one after its ack of the other, so the last
  // chunk of each slot tells. The first member's lanes wait for a pair each, together.
  PURLIN_HD Status await_input_read(const Role& role, int width, std::uint64_t items) {
    const bool ok = for_team_pairs(role, width, items, [&](std::uint64_t c, int k, int q) {
      const std::uint64_t count = plan_.chunking.count(rel_.input_region(k).size);
      if (c >= count || c + plan_.ring.slots < count || !rel_.reads(0, k, q)) return true;
      return be_.wait_at_least(signals_ + sig_.ack(0, q, half_, plan_.ring.slot(c)),
                               layout::drain_ack_value(e_, c));
    });
    return be_.sync_and(ok) ? Status::ok : Status::aborted;
  }

  // Chunk c of input partition k: staged and flagged (throughput) or pushed (latency).
  PURLIN_HD Status stage_item(const Role& role, int k, std::uint64_t c) {
    const layout::Region part = rel_.input_region(k);
    if (c >= plan_.chunking.count(part.size) || !rel_.has_readers(0, k)) return Status::ok;
    const layout::Region chunk = plan_.chunking.range(part, c);
    const std::byte* src = static_cast<const std::byte*>(a_.input) + chunk.offset;
    return plan_.regime == Regime::latency ? push(role, 0, k, c, chunk.size, src)
                                           : stage_chunk(role, k, c, chunk.size, src);
  }

  PURLIN_HD Status stage_chunk(const Role& role, int k, std::uint64_t c, std::size_t bytes,
                               const std::byte* src) {
    if (!drain_wait(0, k, c)) return Status::aborted;
    const Share sh = team_share(bytes, role.size, role.member);
    if constexpr (kScalesAtStage<Op>) {
      // A one-source PreMulSum is the scaled copy (datapath.h: kScalesAtStage).
      const void** table = be_.source_table();
      if (be_.leader()) table[0] = src + sh.begin;
      be_.sync();
      be_.template reduce<E, Op>(slot(r_, c, 0, k) + sh.begin, table, 1, sh.size, a_.op_arg);
    } else {
      be_.copy(slot(r_, c, 0, k) + sh.begin, src + sh.begin, sh.size);
    }
    if (last_of_team(CounterKind::stage, 0, k, c, role.size)) {
      publish(0, k, c, be_.lane(), be_.lanes());
    }
    return Status::ok;
  }

  // Latency: chunk c of partition k pushed as packets into each reader's buffer
  // (engine_packets.h, like every latency-regime move).
  PURLIN_HD Status push(const Role& role, int phase, int k, std::uint64_t c, std::size_t bytes,
                        const std::byte* src);

  // ---- Consume ----------------------------------------------------------------------------

  template <int Ph>
  PURLIN_HD Status consume(const Role& role, CallCheck<B>& check) {
    using Q = std::conditional_t<Ph == 0, F, G>;
    using Out = typename Q::Output;
    if (!Q::is_consumer(r_, a_.root)) return Status::ok;
    if constexpr (Ph == kLast && !Q::reduces) {
      if (plan_.regime == Regime::latency && !(Ph == 0 && rel_.own_partitions())) {
        return poll_copies(role, Ph, check, [&](int k) {
          return PacketSource{Q::source(r_, k, a_.root).rank, 0};
        });
      }
    }
    const int width = Out::regions(n_);
    const std::uint64_t items = plan_.ordinals * static_cast<std::uint64_t>(width);
    for (std::uint64_t i = role.team; i < items; i += role.teams) {
      const std::uint64_t c = item_ordinal(i, width);
      const int k = Out::kind == layout::LayoutKind::packed ? r_ : item_region(i, width);
      if (Ph == 0 && rel_.skip_self() && k == r_) continue;
      const layout::Region region = rel_.template output_region<Ph>(k);
      if (c >= plan_.chunking.count(region.size)) continue;
      if (Ph == 0 && rel_.own_partitions()) {
        if (const Status s = stage_item(role, k, c); s != Status::ok) return s;
        be_.sync();  // every lane's reads of the chunk before any lane's writes into it
      }
      check.look_again();
      const Status s = plan_.regime == Regime::latency ? poll<Ph>(role, k, c, region)
                                                       : pull<Ph>(role, k, c, region);
      if (s != Status::ok) return s;
    }
    return Status::ok;
  }

  template <class Q>
  PURLIN_HD void combine(std::byte* dst, const void** table, int first, int last,
                         std::size_t bytes) const {
    if constexpr (Q::reduces) {
      be_.template reduce<E, ConsumeOp<Op>>(dst, table, last - first + 1, bytes, a_.op_arg);
    } else {
      be_.copy(dst, table[0], bytes);
    }
  }

  template <int Ph>
  PURLIN_HD Status pull(const Role& role, int k, std::uint64_t c, const layout::Region& region) {
    using Q = std::conditional_t<Ph == 0, F, G>;
    int first = 0;
    int last = 0;
    const layout::Source src = rel_.template source<Q>(k, first, last);
    const layout::Region chunk = plan_.chunking.range(region, c);
    const Share sh = team_share(chunk.size, role.size, role.member);
    const std::uint64_t s = plan_.ring.slot(c);

    std::byte* dst = nullptr;
    if constexpr (Ph < kLast) {
      if (!drain_wait(1, r_, c)) return Status::aborted;  // the intermediate is G's staging
      dst = slot(r_, c, 1, r_) + sh.begin;
    } else {
      dst = static_cast<std::byte*>(a_.output) + chunk.offset + sh.begin;
    }

    // Each lane waits for one producer's flag and looks up its chunk, so a reduction's n
    // round trips overlap; the barrier after them orders every lane's loads of the chunks
    // (backend.h).
    bool ok = true;
    const void** table = be_.source_table();
    be_.mark(TracePoint::item, e_, 0);
    for (int j = first + be_.lane(); j <= last && ok; j += be_.lanes()) {
      ok = be_.wait_at_least(signals_ + sig_.flag(Ph, j, s), layout::flag_value(e_, c));
      table[j - first] =
          source_chunk<Ph>(j, c, src.partition, chunk.offset - region.offset) + sh.begin;
    }
    if (!be_.sync_and(ok)) return Status::aborted;
    be_.mark(TracePoint::ready, e_, 0);
    combine<Q>(dst, table, first, last, sh.size);

    // The team's last member acknowledges every producer (and publishes the intermediate),
    // a producer per lane, like the waits above.
    if (last_of_team(CounterKind::consume, Ph, k, c, role.size)) {
      const Flag ack = layout::drain_ack_value(e_, c);
      for (int j = first + be_.lane(); j <= last; j += be_.lanes()) {
        be_.store_release(h_.signals[j] + sig_.ack(Ph, r_, half_, s), ack);
      }
      if constexpr (Ph < kLast) publish(1, r_, c, be_.lane(), be_.lanes());
    }
    return Status::ok;
  }

  // Where producer j's chunk c (at `within` bytes into its partition) lies once its flag was
  // seen: in its input, at the address it published with the flag (zero-copy), else in its
  // staging slot.
  template <int Ph>
  PURLIN_HD const std::byte* source_chunk(int j, std::uint64_t c, int partition,
                                          std::size_t within) const {
    if (Ph == 0 && plan_.zero_copy) {
      const Flag at = be_.load_acquire(signals_ + sig_.input_address(j, half_));
      if (at != 0) {
        return reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(at)) + within;
      }
    }
    return slot(j, c, Ph, partition);
  }

  // Latency (engine_packets.h): one share of chunk c polled from its producers; every
  // region's chunk c polled at once into the output; a composition in one hop.
  template <int Ph>
  PURLIN_HD Status poll(const Role& role, int k, std::uint64_t c, const layout::Region& region);
  template <class Source>
  PURLIN_HD Status poll_copies(const Role& role, int phase, CallCheck<B>& check,
                               Source&& source);
  PURLIN_HD Status consume_one_hop(const Role& role, CallCheck<B>& check);

  // Latency reads of this launch's packets in this rank's buffer (packets.h).
  PURLIN_HD PacketReader<E, Op, B> reader() const {
    return {be_, packets_, pk_, half_, layout::packet_flag(e_), a_.op_arg};
  }

  const B& be_;
  const Handle& h_;
  const Plan& plan_;
  const Args<C, E>& a_;
  int r_;
  int n_;
  SignalLayout sig_;
  PacketLayout pk_;
  CounterLayout ctr_;
  Relations<C, E, Op> rel_;
  // This rank's signal words and packet buffer (Handle tables, entry r_), looked up once: the
  // tables are in global memory, and every acquire empties the L1 that would keep them close.
  Flag* signals_;
  const Packet* packets_;
  Epoch e_ = 0;
  unsigned half_ = 0;
  bool zero_copy_ = false;  // rel_.publishes_input()
  bool released_ = false;  // this worker saw every peer release the launch's half
  Flag seen_release_ = 0;  // look_released: this lane's peer's release word at launch start
};

}  // namespace purlin::snac

#include "snac/engine_packets.h"

namespace purlin::snac {

// One worker's part of one launch. Every worker of a rank calls it with that rank's plan.
template <class C, class E, class Op = op::Sum, Backend B>
PURLIN_HD Status run(const B& be, const Handle& h, const Plan& plan, const Args<C, E>& args) {
  static_assert(layout::Declaration<C>, "run: C must be a collective declaration");
  return Engine<C, E, Op, B>(be, h, plan, args).run();
}

}  // namespace purlin::snac
