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

  // Before staging ordinal c of partition k: the slot's previous occupant was drained.
  PURLIN_HD bool drain_wait(int phase, int k, std::uint64_t c) {
    bool ok = true;
    if (c < plan_.ring.slots) {
      ok = wait_released();
    } else if (be_.leader()) {
      ok = drained(phase, k, c);
    }
    return be_.sync_and(ok);
  }

  // Every reader acknowledged the ordinal that used c's slot before it (c >= ring slots), as
  // seen by the calling thread.
  PURLIN_HD bool drained(int phase, int k, std::uint64_t c) const {
    const Flag want = layout::drain_wait_value(e_, c, plan_.ring.slots);
    const std::uint64_t s = plan_.ring.slot(c);
    for (int q = 0; q < n_; ++q) {
      if (rel_.reads(phase, k, q) &&
          !be_.wait_at_least(signals_ + sig_.ack(phase, q, half_, s), want)) {
        return false;
      }
    }
    return true;
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

  // A first-phase flag also says where the chunk lies (SignalLayout::input_address): its
  // release store publishes the address word written just before it. The calling threads
  // take the readers lane, lane + lanes, ...: all lanes of a worker after a barrier, so that
  // the n release stores do not queue behind one another (and any lane's release after the
  // barrier publishes the whole worker's stores, backend.h), or one thread alone.
  PURLIN_HD void publish(int phase, int k, std::uint64_t c, int lane = 0, int lanes = 1) const {
    const std::uint64_t s = plan_.ring.slot(c);
    const Flag value = layout::flag_value(e_, c);
    Flag where = 0;
    if (zero_copy_ && phase == 0) {
      where = reinterpret_cast<std::uintptr_t>(static_cast<const std::byte*>(a_.input) +
                                               rel_.input_region(k).offset);
    }
    for (int q = lane; q < n_; q += lanes) {
      if (!rel_.reads(phase, k, q)) continue;
      if (phase == 0 && plan_.zero_copy) {
        be_.store_relaxed(h_.signals[q] + sig_.input_address(r_, half_), where);
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

  // Zero-copy: nothing to copy, so the first member's lanes publish the team's items side by
  // side, a lane's own items in increasing ordinal (all the induction above needs), instead of
  // one barrier and one wait after another per item. The team keeps the items a copying stager
  // would have (i = team mod teams), which await_input_read walks again.
  PURLIN_HD Status publish_input(const Role& role, int width, std::uint64_t items) {
    if (!be_.sync_and(wait_released())) return Status::aborted;
    bool ok = true;
    if (role.member == 0) {
      const auto teams = static_cast<std::uint64_t>(role.teams);
      const std::uint64_t step = teams * static_cast<std::uint64_t>(be_.lanes());
      for (std::uint64_t i = role.team + teams * static_cast<std::uint64_t>(be_.lane());
           i < items && ok; i += step) {
        const std::uint64_t c = item_ordinal(i, width);
        const int k = rel_.staged_partition(i, width);
        if (c >= plan_.chunking.count(rel_.input_region(k).size) || !rel_.has_readers(0, k)) continue;
        ok = c < plan_.ring.slots || drained(0, k, c);
        if (ok) publish(0, k, c);
      }
    }
    if (!be_.sync_and(ok)) return Status::aborted;
    be_.mark(TracePoint::push, e_, 0);
    return await_input_read(role, width);
  }

  // Zero-copy: the launch may end only when every reader acknowledged every chunk of this
  // rank's input that this team published. Acks on one slot grow with the ordinal and chunks
  // on a slot were published one after another's ack, so the last chunk of each slot tells.
  PURLIN_HD Status await_input_read(const Role& role, int width) {
    bool ok = true;
    if (be_.leader() && role.member == 0) {
      const std::uint64_t items = plan_.ordinals * static_cast<std::uint64_t>(width);
      for (std::uint64_t i = role.team; i < items && ok; i += role.teams) {
        const std::uint64_t c = item_ordinal(i, width);
        const int k = rel_.staged_partition(i, width);
        const std::uint64_t count = plan_.chunking.count(rel_.input_region(k).size);
        if (c >= count || c + plan_.ring.slots < count) continue;
        const std::uint64_t s = plan_.ring.slot(c);
        for (int q = 0; q < n_ && ok; ++q) {
          if (rel_.reads(0, k, q)) {
            ok = be_.wait_at_least(signals_ + sig_.ack(0, q, half_, s),
                                   layout::drain_ack_value(e_, c));
          }
        }
      }
    }
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

  // Latency: stage and notify in one store per 8 bytes, straight into each reader's buffer.
  // `src` is chunk c of partition k (`bytes` long); packets are numbered from the partition
  // start, which one hop offsets by the partition's place in the input (packet_base). Each
  // payload is loaded once and stored to every reader. No arrival: each packet carries its
  // own flag.
  PURLIN_HD Status push(const Role& role, int phase, int k, std::uint64_t c, std::size_t bytes,
                        const std::byte* src) {
    be_.mark(TracePoint::push, e_, 0);
    if (!be_.sync_and(wait_released())) return Status::aborted;
    be_.mark(TracePoint::ready, e_, 0);
    const Share sh = team_share(bytes, role.size, role.member);
    const std::size_t first =
        rel_.packet_base(k) + (c * plan_.chunking.stride + sh.begin) / kPacketPayload;
    const std::size_t count = layout::detail::ceil_div(sh.size, kPacketPayload);
    const Flag flag = layout::packet_flag(e_);
    std::uint64_t readers = 0;  // ranks <= 64 (launch::kMaxRanks)
    for (int q = 0; q < n_; ++q) readers |= rel_.reads(phase, k, q) ? std::uint64_t{1} << q : 0;
    const std::size_t at0 = pk_.index(phase, half_, r_, first);
    for (std::size_t p = static_cast<std::size_t>(be_.lane()); p < count;
         p += static_cast<std::size_t>(be_.lanes())) {
      const std::size_t at = sh.begin + p * kPacketPayload;
      std::uint64_t payload = detail::load_payload(src + at, sh.size - (at - sh.begin));
      if constexpr (kScalesAtStage<Op>) {
        if (phase == 0) payload = detail::scaled_payload(payload, a_.op_arg);
      }
      for (int q = 0; q < n_; ++q) {
        if ((readers >> q) & 1u) be_.put_packet(h_.packets[q] + at0 + p, payload, flag);
      }
    }
    return Status::ok;
  }

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

  // Latency: poll this share's packets from each producer into the destination (the output,
  // or a composition's intermediate in scratch), which a composition's first phase then
  // pushes onward.
  template <int Ph>
  PURLIN_HD Status poll(const Role& role, int k, std::uint64_t c, const layout::Region& region) {
    using Q = std::conditional_t<Ph == 0, F, G>;
    int first = 0;
    int last = 0;
    (void)rel_.template source<Q>(k, first, last);
    const layout::Region chunk = plan_.chunking.range(region, c);
    const Share sh = team_share(chunk.size, role.size, role.member);
    const std::size_t within = chunk.offset - region.offset + sh.begin;  // from partition start
    std::byte* dst = Ph < kLast ? scratch(n_) + within
                                : static_cast<std::byte*>(a_.output) + chunk.offset + sh.begin;
    const std::size_t packet0 = within / kPacketPayload;
    const bool ok = reader().template share<Q::reduces>(Ph, first, last, packet0, sh.size, dst);
    if (!be_.sync_and(ok)) return Status::aborted;
    if constexpr (Ph < kLast) {
      return push(role, 1, r_, c, chunk.size, scratch(n_) + (chunk.offset - region.offset));
    }
    return Status::ok;
  }

  // Latency, copies into the output: chunk c of every region this rank consumes, all at
  // once, so each thread has the loads of all its regions' packets in flight together
  // (batches of kPacketBatch regions) instead of one region's round trip after another.
  // `source(k)` names the producer of region k.
  template <class Source>
  PURLIN_HD Status poll_copies(const Role& role, int phase, CallCheck<B>& check, Source&& source) {
    using Out = typename C::Output;
    constexpr int kB = detail::kPacketBatch;
    const int width = Out::regions(n_);
    const Packet* mine = packets_;
    // Where region kk's share of chunk c comes from and goes (bytes 0: nothing to read).
    auto region_of = [&](int kk, std::uint64_t c) {
      CopyRegion x{mine, nullptr, 0};
      if (kk >= width) return x;
      const int k = Out::kind == layout::LayoutKind::packed ? r_ : kk;
      if (!Out::holds(r_, k) || (phase == 0 && rel_.skip_self() && k == r_)) return x;
      const layout::Region region = Out::region(a_.out_shape, r_, k).in_bytes(es);
      if (c >= plan_.chunking.count(region.size)) return x;
      const PacketSource src = source(k);
      const layout::Region chunk = plan_.chunking.range(region, c);
      const Share sh = team_share(chunk.size, role.size, role.member);
      const std::size_t within = chunk.offset - region.offset + sh.begin;
      x.in = mine + pk_.index(phase, half_, src.rank, src.base + within / kPacketPayload);
      x.dst = static_cast<std::byte*>(a_.output) + chunk.offset + sh.begin;
      x.bytes = sh.size;
      return x;
    };
    for (std::uint64_t c = role.team; c < plan_.ordinals; c += role.teams) {
      for (int k0 = 0; k0 < width; k0 += kB) {
        // Region k0 + b in slot b; unrolled indexing only, so the arrays stay in registers.
        const Packet* in[kB];
        std::byte* dst[kB];
        std::size_t bytes[kB];
        std::size_t most = 0;
        // Lane b of each lane group works out region k0 + b and the group shares the answers:
        // one region's setup on the critical path instead of kB in a row (8 ranks on one H100:
        // 2.0 -> 0.5 us, perf/snac/results/h100-20261207-regions). A group smaller than the
        // batch (the host's one lane) works out every region itself.
        constexpr bool shared = B::group_lanes >= kB;
        const int slot = be_.lane() % B::group_lanes;
        CopyRegion own{mine, nullptr, 0};
        if (shared && slot < kB) own = region_of(k0 + slot, c);
        PURLIN_UNROLL
        for (int b = 0; b < kB; ++b) {
          const CopyRegion x = shared ? CopyRegion{be_.from_group_lane(own.in, b),
                                                   be_.from_group_lane(own.dst, b),
                                                   be_.from_group_lane(own.bytes, b)}
                                      : region_of(k0 + b, c);
          in[b] = x.in;
          dst[b] = x.dst;
          bytes[b] = x.bytes;
          most = layout::detail::max_of(most, x.bytes);
        }
        be_.mark(TracePoint::item, e_, 0);
        check.look_again();
        if (!be_.sync_and(reader().copies(in, dst, bytes, most))) return Status::aborted;
      }
    }
    return Status::ok;
  }

  // One hop (latency regime of a composition): output region k, chunk c, straight from the
  // producers of the input partition it depends on (layout compose::one_hop_source).
  PURLIN_HD Status consume_one_hop(const Role& role, CallCheck<B>& check) {
    if constexpr (!Prog::composed) {
      return Status::ok;
    } else {
      using Out = typename C::Output;
      if (!C::is_consumer(r_, a_.root)) return Status::ok;
      if constexpr (!C::reduces) {
        return poll_copies(role, 0, check, [&](int k) {
          const layout::Source src = C::one_hop_source(r_, k, a_.root);
          return PacketSource{src.rank, rel_.packet_base(src.partition)};
        });
      }
      const int width = Out::regions(n_);
      const std::uint64_t items = plan_.ordinals * static_cast<std::uint64_t>(width);
      for (std::uint64_t i = role.team; i < items; i += role.teams) {
        const std::uint64_t c = item_ordinal(i, width);
        const int k = item_region(i, width);
        if (!Out::holds(r_, k)) continue;
        const layout::Region region = Out::region(a_.out_shape, r_, k).in_bytes(es);
        if (c >= plan_.chunking.count(region.size)) continue;
        const layout::Source src = C::one_hop_source(r_, k, a_.root);
        const int first = src.rank == layout::kAllRanks ? 0 : src.rank;
        const int last = src.rank == layout::kAllRanks ? n_ - 1 : src.rank;
        const layout::Region chunk = plan_.chunking.range(region, c);
        const Share sh = team_share(chunk.size, role.size, role.member);
        const std::size_t within = chunk.offset - region.offset + sh.begin;
        std::byte* dst = static_cast<std::byte*>(a_.output) + chunk.offset + sh.begin;
        const std::size_t packet0 = rel_.packet_base(src.partition) + within / kPacketPayload;
        be_.mark(TracePoint::item, e_, 0);
        check.look_again();
        const bool ok = reader().template share<C::reduces>(0, first, last, packet0, sh.size, dst);
        if (!be_.sync_and(ok)) return Status::aborted;
      }
      return Status::ok;
    }
  }

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

// One worker's part of one launch. Every worker of a rank calls it with that rank's plan.
template <class C, class E, class Op = op::Sum, Backend B>
PURLIN_HD Status run(const B& be, const Handle& h, const Plan& plan, const Args<C, E>& args) {
  static_assert(layout::Declaration<C>, "run: C must be a collective declaration");
  return Engine<C, E, Op, B>(be, h, plan, args).run();
}

}  // namespace purlin::snac
