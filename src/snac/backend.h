// What an execution backend supplies to the SNAC engine. The protocol (engine.h) is written once
// against this interface; DeviceBackend (device_backend.cuh) runs it in CTAs on a GPU,
// HostBackend (host_backend.h) in CPU threads that play the CTAs.
//
//   int worker()               role/worker index: blockIdx.x, or the host thread's index
//   bool leader()              the one thread of a worker that waits and publishes
//   int lane(), lanes()        this thread's index and the thread count within the worker
//   void sync()                barrier over the worker's threads (__syncthreads)
//   B::group_lanes             lanes that exchange registers without a barrier: a warp (CTAs
//                              are whole warps, atom/config.h), or the host worker's one lane
//   T from_group_lane(T v, int from)  the v (8 bytes) that lane `from` of this thread's group
//                              passed; every lane of the group calls it together (a group of
//                              one lane has nothing to exchange: the identity)
//   bool sync_and(bool)        the same barrier, returning whether the predicate held everywhere
//   Flag load_acquire(const Flag*)         system-scope acquire load
//   void store_release(Flag*, Flag)        system-scope release store
//   uint64 fetch_add(uint64*, uint64)      acq_rel read-modify-write on rank-local memory
//   void store_relaxed(uint64*, uint64)    relaxed store, system scope (peer-visible words too)
//   void store_after_launches(Flag*, Flag) a store that vouches only for this rank's accesses
//                                          of earlier launches: on a GPU the kernel boundary
//                                          performed them all, so it is relaxed (no fence); a
//                                          host world, whose launch boundary is a barrier of
//                                          the rank's threads, releases
//   bool wait_at_least(const Flag*, Flag)  acquire-poll until the word reaches the value; false
//                                          when the backend gives up (timeout or abort), after
//                                          which the engine unwinds with Status::aborted
//   void put_packet(Packet*, payload, flag)          one 16-byte store: data and flag together
//   bool try_packet(const Packet*, flag, payload&)   one load: whether it carries >= flag
//   Packet load_packet(const Packet*)                the same load, whole
//   void watch(const FingerprintWatch&)    the launch's call fingerprints, which every wait
//                                          that lingers checks (fingerprint.h)
//   bool mismatch(int peer, uint64 theirs) records that peer's call differs and makes this
//                                          worker's waits give up; returns false
//   bool mismatched()                      whether this thread recorded or met a mismatch
//   bool poll(done, const Flag* word, Flag want)     calls done() until true, with the waits'
//                                                    way out (word, want: for the report)
//   const void** source_table()            >= ranks pointers every thread of the worker can read
//   void copy(dst, src, bytes)             the Atom, executed by all threads of the worker
//   void reduce<E, Op>(dst, sources, n, bytes, OpArg<E>)
//   void mark(TracePoint, Epoch, uint64)    profiling timeline (trace.h); may do nothing
//
// Memory-order contract the engine relies on: any thread's release store after sync() publishes
// every store the worker's threads made before the sync (PTX release is cumulative; on the host
// the worker is one thread); an acquire by any thread followed by sync() orders the worker's
// later loads after the observed store.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "snac/datapath.h"
#include "snac/fingerprint.h"
#include "snac/handle.h"
#include "snac/trace.h"

namespace purlin::snac {

// Bytes of a worker's source table (source_table(): ranks pointers); the device kernel keeps it
// in shared memory behind the Atom's workspace (kernel.cuh).
PURLIN_HD constexpr std::size_t source_table_bytes(int ranks) {
  return static_cast<std::size_t>(ranks) * sizeof(void*);
}

// A probe for the concept's check of poll(): done at once.
struct DoneProbe {
  PURLIN_HD bool operator()() const { return true; }
};

template <class B>
concept Backend = requires(const B& b, Flag* word, const Flag* cword, Flag value, Packet* packet,
                           const Packet* cpacket, std::uint64_t& payload, void* dst,
                           const void* src, const void* const* sources, std::size_t bytes) {
  { b.worker() } -> std::same_as<int>;
  { b.leader() } -> std::same_as<bool>;
  { b.lane() } -> std::same_as<int>;
  { b.lanes() } -> std::same_as<int>;
  b.sync();
  { b.sync_and(true) } -> std::same_as<bool>;
  { B::group_lanes } -> std::convertible_to<int>;
  { b.from_group_lane(value, 0) } -> std::same_as<Flag>;
  { b.load_acquire(cword) } -> std::same_as<Flag>;
  b.store_release(word, value);
  { b.fetch_add(word, value) } -> std::same_as<std::uint64_t>;
  b.store_relaxed(word, value);
  b.store_after_launches(word, value);
  { b.wait_at_least(cword, value) } -> std::same_as<bool>;
  b.put_packet(packet, value, value);
  { b.try_packet(cpacket, value, payload) } -> std::same_as<bool>;
  { b.load_packet(cpacket) } -> std::same_as<Packet>;
  b.watch(FingerprintWatch{});
  { b.mismatch(0, value) } -> std::same_as<bool>;
  { b.mismatched() } -> std::same_as<bool>;
  { b.poll(DoneProbe{}, cword, value) } -> std::same_as<bool>;
  { b.source_table() } -> std::same_as<const void**>;
  b.copy(dst, src, bytes);
  b.template reduce<float, op::Sum>(dst, sources, 1, bytes, OpArg<float>{});
  b.mark(TracePoint::entry, value, value);
};

}  // namespace purlin::snac
