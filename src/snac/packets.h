// Latency-regime packet moves (DESIGN §2, "two regimes, one protocol"): the byte-exact payload
// of one packet, and the reads a consumer thread makes of this launch's packets in its own
// buffer. The engine (engine.h) decides which packets a share needs; this file only moves them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nv/target>

#include "layout/chunking.h"
#include "layout/host_device.h"
#include "snac/datapath.h"
#include "snac/handle.h"

namespace purlin::snac {

namespace detail {

// Packets carry 8 bytes; the last packet of a partition may carry fewer. Byte-exact so that an
// odd count or an unaligned buffer loses nothing and reads nothing outside the range. A whole,
// aligned payload is one 8-byte access: a device memcpy of unknown alignment is 8 byte loads.
PURLIN_HD inline bool whole_word(const std::byte* p, std::size_t valid) {
  return valid >= kPacketPayload && reinterpret_cast<std::uintptr_t>(p) % kPacketPayload == 0;
}

PURLIN_HD inline std::uint64_t load_payload(const std::byte* p, std::size_t valid) {
  std::uint64_t v = 0;
  if (whole_word(p, valid)) {
    NV_IF_ELSE_TARGET(NV_IS_DEVICE, (v = *reinterpret_cast<const std::uint64_t*>(p);),
                      (std::memcpy(&v, p, kPacketPayload);))
  } else {
    const std::size_t n = valid < kPacketPayload ? valid : kPacketPayload;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  }
  return v;
}

PURLIN_HD inline void store_payload(std::byte* p, std::uint64_t v, std::size_t valid) {
  if (whole_word(p, valid)) {
    NV_IF_ELSE_TARGET(NV_IS_DEVICE, (*reinterpret_cast<std::uint64_t*>(p) = v;),
                      (std::memcpy(p, &v, kPacketPayload);))
  } else {
    const std::size_t n = valid < kPacketPayload ? valid : kPacketPayload;
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
  }
}

// Packets one thread waits for at once (latency regime): their loads are all issued before
// any is spun on, and a batch holds one packet of each of up to 8 producers (a reduction) or
// 8 of one producer's packets (a copy).
inline constexpr int kPacketBatch = 8;

// The producer's PreMulSum scaling of one packet's elements (elements never straddle packets:
// shares start on 16-byte boundaries and element sizes divide 8). Bytes past the valid ones
// are scaled too and ignored by the consumer.
template <class E>
PURLIN_HD std::uint64_t scaled_payload(std::uint64_t payload, OpArg<E> arg) {
  static_assert(kPacketPayload % sizeof(E) == 0);
  const atom::Reducer<E, op::PreMulSum> r(1, arg);
  E v[kPacketPayload / sizeof(E)];
  std::memcpy(static_cast<void*>(v), &payload, kPacketPayload);
  for (std::size_t i = 0; i < kPacketPayload / sizeof(E); ++i) v[i] = premultiply(v[i], r);
  std::memcpy(&payload, v, kPacketPayload);
  return payload;
}

}  // namespace detail

// Where the packets of one output region come from: the producer, and the packet of its area
// in the reader's buffer that the region's first byte travels in.
struct PacketSource {
  int rank = 0;
  std::size_t base = 0;
};

// One region's share of a chunk that a consumer copies out of its packets (PacketReader::copies):
// the first packet, where its payload goes, and how many bytes (0: nothing to read).
struct CopyRegion {
  const Packet* in = nullptr;
  std::byte* dst = nullptr;
  std::size_t bytes = 0;
};

// This launch's packets (flag `flag`, staging half `half`) in one rank's packet buffer, read by
// one thread of a worker; E and Op are the call's, so a reduction combines as the Atom does.
template <class E, class Op, class B>
class PacketReader {
  static constexpr std::size_t es = sizeof(E);

 public:
  PURLIN_HD PacketReader(const B& be, const Packet* mine, PacketLayout pk, unsigned half, Flag flag,
                         OpArg<E> arg)
      : be_(be), mine_(mine), pk_(pk), half_(half), flag_(flag), arg_(arg) {}

  // This thread's packets of one share: `bytes` from packet `packet0` of each producer's area
  // in [first, last] (rank order) of this rank's buffer, into `dst`. A copy (one producer)
  // moves payloads; a reduction combines every producer's packet in registers with the Atom's
  // Reducer, first/next in ascending rank order then finish (atom/combine.h), the sequence
  // Atom::reduce applies to each element in the throughput regime, so both regimes give the
  // same bits. False when a wait gave up.
  template <bool Reduces>
  PURLIN_HD bool share(int phase, int first, int last, std::size_t packet0, std::size_t bytes,
                       std::byte* dst) const {
    const std::size_t count = layout::detail::ceil_div(bytes, kPacketPayload);
    const auto lane = static_cast<std::size_t>(be_.lane());
    const auto lanes = static_cast<std::size_t>(be_.lanes());
    if constexpr (!Reduces) {
      const Packet* in = mine_ + pk_.index(phase, half_, first, packet0);
      for (std::size_t p0 = lane; p0 < count; p0 += lanes * detail::kPacketBatch) {
        const Packet* at[detail::kPacketBatch];
        std::uint64_t payload[detail::kPacketBatch] = {};
        unsigned live = 0;
        PURLIN_UNROLL
        for (int b = 0; b < detail::kPacketBatch; ++b) {
          const bool here = p0 + b * lanes < count;
          at[b] = here ? in + p0 + b * lanes : in;  // never a pointer past the buffer
          if (here) live |= 1u << b;
        }
        if (!await(at, live, payload)) return false;
        PURLIN_UNROLL
        for (int b = 0; b < detail::kPacketBatch; ++b) {
          if (((live >> b) & 1u) == 0) continue;
          const std::size_t off = (p0 + b * lanes) * kPacketPayload;
          detail::store_payload(dst + off, payload[b], bytes - off);
        }
      }
    } else {
      using R = atom::Reducer<E, ConsumeOp<Op>>;
      using Acc = typename R::Acc;
      constexpr int kElems = static_cast<int>(kPacketPayload / es);
      static_assert(kPacketPayload % es == 0);
      const R reducer(last - first + 1, arg_);
      for (std::size_t p = lane; p < count; p += lanes) {
        Acc acc[kElems] = {};  // every element is set by the first producer
        for (int j0 = first; j0 <= last; j0 += detail::kPacketBatch) {
          const Packet* at[detail::kPacketBatch];
          std::uint64_t payload[detail::kPacketBatch] = {};
          unsigned live = 0;
          PURLIN_UNROLL
          for (int b = 0; b < detail::kPacketBatch; ++b) {
            at[b] = mine_ + pk_.index(phase, half_, j0 + b <= last ? j0 + b : last, packet0 + p);
            if (j0 + b <= last) live |= 1u << b;
          }
          if (!await(at, live, payload)) return false;
          PURLIN_UNROLL
          for (int b = 0; b < detail::kPacketBatch; ++b) {
            if (((live >> b) & 1u) == 0) continue;
            E v[kElems];
            std::memcpy(static_cast<void*>(v), &payload[b], kPacketPayload);
            PURLIN_UNROLL
            for (int i = 0; i < kElems; ++i) {
              acc[i] = j0 + b == first ? reducer.first(v[i]) : reducer.next(acc[i], v[i]);
            }
          }
        }
        E out[kElems];
        PURLIN_UNROLL
        for (int i = 0; i < kElems; ++i) out[i] = reducer.finish(acc[i]);
        std::uint64_t word = 0;
        std::memcpy(&word, static_cast<const void*>(out), kPacketPayload);
        detail::store_payload(dst + p * kPacketPayload, word, bytes - p * kPacketPayload);
      }
    }
    return true;
  }

  // This thread's packets of up to kPacketBatch regions at once: region b's `bytes[b]` from
  // packet `in[b]` into `dst[b]` (bytes 0: no region b; `most`: the largest), the loads of all
  // of them in flight together. Fixed-size arrays indexed by unrolled loops only, so that they
  // stay in registers.
  PURLIN_HD bool copies(const Packet* const (&in)[detail::kPacketBatch],
                        std::byte* const (&dst)[detail::kPacketBatch],
                        const std::size_t (&bytes)[detail::kPacketBatch], std::size_t most) const {
    const std::size_t count = layout::detail::ceil_div(most, kPacketPayload);
    for (std::size_t p = static_cast<std::size_t>(be_.lane()); p < count;
         p += static_cast<std::size_t>(be_.lanes())) {
      const std::size_t off = p * kPacketPayload;
      const Packet* at[detail::kPacketBatch];
      std::uint64_t payload[detail::kPacketBatch] = {};
      unsigned live = 0;
      PURLIN_UNROLL
      for (int b = 0; b < detail::kPacketBatch; ++b) {
        at[b] = in[b] + p;
        if (off < bytes[b]) live |= 1u << b;
      }
      if (!await(at, live, payload)) return false;
      PURLIN_UNROLL
      for (int b = 0; b < detail::kPacketBatch; ++b) {
        if (((live >> b) & 1u) != 0) detail::store_payload(dst[b] + off, payload[b], bytes[b] - off);
      }
    }
    return true;
  }

  // Waits until the packets at `at` whose bit is set in `live` carry this launch's flag. Every
  // load is issued before any is waited on, and only the ones still missing are polled again.
  PURLIN_HD bool await(const Packet* const (&at)[detail::kPacketBatch], unsigned live,
                       std::uint64_t (&payload)[detail::kPacketBatch]) const {
    const Flag flag = flag_;
    unsigned missing = 0;
    PURLIN_UNROLL
    for (int b = 0; b < detail::kPacketBatch; ++b) {
      if (((live >> b) & 1u) != 0 && !be_.try_packet(at[b], flag, payload[b])) missing |= 1u << b;
    }
    if (missing == 0) return true;
    const Packet* watched = nullptr;  // named in a stall report
    PURLIN_UNROLL
    for (int b = detail::kPacketBatch - 1; b >= 0; --b) {
      if (((missing >> b) & 1u) != 0) watched = at[b];
    }
    return be_.poll(
        [&] {
          PURLIN_UNROLL
          for (int b = 0; b < detail::kPacketBatch; ++b) {
            if (((missing >> b) & 1u) != 0 && be_.try_packet(at[b], flag, payload[b])) {
              missing &= ~(1u << b);
            }
          }
          return missing == 0;
        },
        &watched->flag, flag);
  }

 private:
  const B& be_;
  const Packet* mine_;
  PacketLayout pk_;
  unsigned half_;
  Flag flag_;
  OpArg<E> arg_;
};

}  // namespace purlin::snac
