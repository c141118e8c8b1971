// The latency regime's moves of the SNAC engine (engine.h declares them): a stager's packet
// push, a consumer's poll of one share or of every region's chunk at once, and a composition
// in one hop. Packets fuse stage and notify (policy.h: Regime); their reads are packets.h.
// Included by engine.h after the class; not a header of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "snac/engine.h"

namespace purlin::snac {

// Latency: stage and notify in one store per 8 bytes, straight into each reader's buffer.
// `src` is chunk c of partition k (`bytes` long); packets are numbered from the partition
// start, which one hop offsets by the partition's place in the input (packet_base). Each
// payload is loaded once and stored to every reader. No arrival: each packet carries its
// own flag.
template <class C, class E, class Op, class B>
PURLIN_HD Status Engine<C, E, Op, B>::push(const Role& role, int phase, int k, std::uint64_t c,
                                           std::size_t bytes, const std::byte* src) {
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

// Latency: poll this share's packets from each producer into the destination (the output,
// or a composition's intermediate in scratch), which a composition's first phase then
// pushes onward.
template <class C, class E, class Op, class B>
template <int Ph>
PURLIN_HD Status Engine<C, E, Op, B>::poll(const Role& role, int k, std::uint64_t c,
                                           const layout::Region& region) {
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
template <class C, class E, class Op, class B>
template <class Source>
PURLIN_HD Status Engine<C, E, Op, B>::poll_copies(const Role& role, int phase, CallCheck<B>& check,
                                                  Source&& source) {
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
        const CopyRegion x =
            shared ? CopyRegion{be_.from_group_lane(own.in, b), be_.from_group_lane(own.dst, b),
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
template <class C, class E, class Op, class B>
PURLIN_HD Status Engine<C, E, Op, B>::consume_one_hop(const Role& role, CallCheck<B>& check) {
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

}  // namespace purlin::snac
