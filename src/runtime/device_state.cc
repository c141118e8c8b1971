// DeviceState: allocation, exchange and mapping of a communicator's SNAC memory.
//
// Creation is collective and ends with the same verdict on every rank: each rank joins both
// exchanges even after a local failure (with ok = 0), so a rank that cannot allocate makes the
// others fail promptly instead of leaving them in the bootstrap until its timeout.
//   1. allocate and zero the peer-visible block, export it, query the GPU's facts
//   2. exchange PeerRecords; check everyone succeeded and agrees on the geometry
//   3. select the policy from the agreed facts; allocate and zero the rank-local words and the
//      host-mapped control words; map every peer's block; publish the peer pointer tables
//   4. exchange verdicts (success and the policy, which every rank's plans derive from)
#include "runtime/device_state.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/log.h"
#include "policy/policy.h"
#include "runtime/communicator.h"
#include "runtime/cuda_check.h"
#include "runtime/device_layout.h"
#include "runtime/launch_events.h"
#include "runtime/launch_trace.h"
#include "runtime/peer_memory.h"
#include "runtime/placement.h"
#include "runtime/stall_report.h"

namespace purlin::runtime {
namespace {

// The host-mapped launch control: abort, status and the stall record on separate 64-byte
// lines, so the host's abort store and a kernel's updates never contend for one line.
struct ControlWords {
  alignas(64) unsigned abort;
  alignas(64) unsigned status;
  alignas(64) snac::StallRecord stall;
};

// The second exchange: whether the rank finished setting up, and the policy it selected. Every
// rank plans every launch from its own policy, so all of them must be equal (a PURLIN_ROLES set
// in one process only would otherwise derail the protocol instead of failing here).
struct Verdict {
  std::int32_t ok = 0;
  snac::Policy policy{};

  // Zeroed first: the struct travels as bytes, padding included.
  static Verdict of(bool ok, const snac::Policy& p) {
    Verdict v;
    std::memset(static_cast<void*>(&v), 0, sizeof(v));
    v.ok = ok ? 1 : 0;
    v.policy = p;
    return v;
  }
  bool same_policy(const Verdict& o) const { return policy == o.policy; }
};
static_assert(std::is_trivially_copyable_v<Verdict>, "verdicts are exchanged as bytes");

// Ranks of one process that share a GPU submit through that process's hardware work queues
// (CUDA_DEVICE_MAX_CONNECTIONS of them, 8 by default), onto which CUDA maps its streams. Two
// ranks' streams on one queue can hang each other: whatever follows a rank's collective in its
// stream (an event record, the next call) holds the queue until that collective ends, and the
// collective waits for the other rank's, queued behind it. Measured on one H200, 8 ranks as
// threads, 256 MiB of every collective per process (perf/snac/results/h200-20261203-stall):
// 5 of 48 processes hung with 8 queues, 1 of 1 with one queue, none of 43 with 32. The stall
// reports show every CTA of the waiting ranks started: the missing peer's kernel was queued,
// not starved of SMs. Processes under MPS own their queues.
void warn_if_queues_are_shared(const std::vector<PeerRecord>& records, int rank) {
  const GpuShare share = process_share_of_gpu(records, rank);
  if (share.ranks < 2 || share.first != rank) return;
  const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const long queues = env != nullptr ? std::strtol(env, nullptr, 10) : 8;
  if (queues >= 32) return;
  PURLIN_WARN("rank %d: %d ranks of this process share cudaDev %d with CUDA_DEVICE_MAX_CONNECTIONS=%s: "
              "two of their streams may share a hardware queue, where one rank's second "
              "collective blocks another rank's first and both hang; set "
              "CUDA_DEVICE_MAX_CONNECTIONS=32 before CUDA starts",
              rank, share.ranks, records[static_cast<std::size_t>(rank)].device,
              env != nullptr ? env : "8 (unset)");
}

ncclResult_t check_records(const std::vector<PeerRecord>& records, int rank) {
  const PeerRecord& me = records[rank];
  for (std::size_t r = 0; r < records.size(); ++r) {
    if (records[r].ok == 0) {
      PURLIN_WARN("rank %d: rank %zu failed to set up its SNAC device state", rank, r);
      return ncclRemoteError;
    }
  }
  for (std::size_t r = 0; r < records.size(); ++r) {
    const PeerRecord& p = records[r];
    if (p.pair_slots != me.pair_slots || p.pair_chunk_bytes != me.pair_chunk_bytes ||
        p.pair_packet_slots != me.pair_packet_slots || p.pair_packet_bytes != me.pair_packet_bytes) {
      PURLIN_WARN("rank %d: rank %zu has point-to-point chunks of %llu B in %u slots, packets of %llu B in %u; this "
                  "rank %llu B in %u, %llu B in %u: set PURLIN_P2P_CHUNK_BYTES, PURLIN_P2P_SLOTS and "
                  "PURLIN_P2P_PACKET_BYTES alike on every rank",
                  rank, r, static_cast<unsigned long long>(p.pair_chunk_bytes), p.pair_slots,
                  static_cast<unsigned long long>(p.pair_packet_bytes), p.pair_packet_slots,
                  static_cast<unsigned long long>(me.pair_chunk_bytes), me.pair_slots,
                  static_cast<unsigned long long>(me.pair_packet_bytes), me.pair_packet_slots);
      return ncclInvalidUsage;
    }
    if (p.staging_bytes != me.staging_bytes || p.packet_capacity != me.packet_capacity ||
        p.slots != me.slots) {
      PURLIN_WARN(
          "rank %d: rank %zu has staging %llu B, %llu packets, %u slots; this rank %llu B, "
          "%llu packets, %u slots: set PURLIN_STAGING_BYTES and PURLIN_PACKET_BYTES alike on "
          "every rank",
          rank, r, static_cast<unsigned long long>(p.staging_bytes),
          static_cast<unsigned long long>(p.packet_capacity), p.slots,
          static_cast<unsigned long long>(me.staging_bytes),
          static_cast<unsigned long long>(me.packet_capacity), me.slots);
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

ncclResult_t check_verdicts(const std::vector<Verdict>& verdicts, int rank) {
  for (std::size_t r = 0; r < verdicts.size(); ++r) {
    if (verdicts[r].ok == 0) {
      PURLIN_WARN("rank %d: rank %zu failed to map its peers' SNAC memory", rank, r);
      return ncclRemoteError;
    }
  }
  for (std::size_t r = 0; r < verdicts.size(); ++r) {
    if (!verdicts[r].same_policy(verdicts[rank])) {
      PURLIN_WARN(
          "rank %d: rank %zu selected another SNAC policy: set PURLIN_CHUNK_BYTES, "
          "PURLIN_PACKET_CHUNK_BYTES, PURLIN_LATENCY_MAX_BYTES, PURLIN_ROLES, "
          "PURLIN_LATENCY_ROLES, PURLIN_RING_SLOTS, PURLIN_SPREAD_MIN_BYTES, PURLIN_RANK_ROLES_MIN_BYTES, "
          "PURLIN_ZERO_COPY, PURLIN_SHARE_ITEMS, PURLIN_SPREAD_TEAMS, "
          "NCCL_MIN_CTAS, NCCL_MAX_CTAS and the config's minCTAs/maxCTAs alike on every rank",
          rank, r);
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

snac::Status to_status(unsigned word) {
  // mismatch is the last enumerator of snac::Status.
  if (word <= static_cast<unsigned>(snac::Status::mismatch)) {
    return static_cast<snac::Status>(word);
  }
  return snac::Status::aborted;  // not a Status a kernel writes: treat the launch as failed
}

}  // namespace

struct DeviceState::Impl {
  int rank = 0;
  int device = -1;
  DeviceStateConfig config{};
  snac::Policy policy{};
  snac::Handle handle{};
  snac::PairHandle pair_handle{};
  snac::DeviceControl control{};
  PeerBlockLayout peer_layout{};
  LocalBlockLayout local_layout{};

  cudaStream_t init_stream = nullptr;  // creation's copies; private, so it waits on nothing else
  std::byte* peer_block = nullptr;
  std::byte* local_block = nullptr;
  LaunchTrace trace;  // profiling (PURLIN_TRACE_FILE)
  void** peer_tables = nullptr;  // staging, signals, packets, pair staging, pair signals, pair packets: [ranks] each
  ControlWords* words = nullptr;  // host view of the control words
  PeerMappings peers;
  std::size_t device_bytes = 0;
  LaunchEvents launches;
  bool quiesced = false;  // every recorded launch has ended
  bool exiting = false;   // the CUDA runtime is unloading: call nothing more
  bool leaked = false;    // a launch may still run: free nothing

  ncclResult_t prepare(Communicator& comm, PeerRecord& mine);
  ncclResult_t allocate_local(int ranks);
  ncclResult_t publish_tables(int ranks);
  ncclResult_t finish_init();
  void report(int ranks) const;
  bool quiesce(std::optional<std::chrono::milliseconds> bound);
  void release_private();
  void release();
};

// Step 1: everything this rank can do alone before the first exchange.
ncclResult_t DeviceState::Impl::prepare(Communicator& comm, PeerRecord& mine) {
  const int ranks = comm.size();
  mine.token = process_token();
  mine.device = device;
  mine.staging_bytes = config.staging_bytes;
  mine.packet_capacity = packet_capacity(config.packet_bytes);
  mine.slots = config.slots;
  mine.pair_slots = config.pair_slots;
  mine.pair_chunk_bytes = config.pair_chunk_bytes;
  mine.pair_packet_slots = config.pair_packet_slots;
  mine.pair_packet_bytes = config.pair_packet_bytes;
  mine.ranks_on_gpu = comm.ranks_on_my_gpu();
  if (device < 0) {
    PURLIN_WARN("rank %d: no GPU; the SNAC device state needs one per rank", rank);
    return ncclInvalidUsage;
  }
  if (config.staging_bytes < 512 || config.slots < 1 || config.epoch_slots < 1) {
    PURLIN_WARN("rank %d: bad DeviceStateConfig: staging_bytes %zu (>= 512), slots %u (>= 1), "
                "epoch_slots %d (>= 1)",
                rank, config.staging_bytes, config.slots, config.epoch_slots);
    return ncclInvalidArgument;
  }
  if (cuda_failed(cudaDeviceGetAttribute(&mine.sm_major, cudaDevAttrComputeCapabilityMajor,
                                         device),
                  rank, "cudaDeviceGetAttribute(ComputeCapabilityMajor)") ||
      cuda_failed(cudaDeviceGetAttribute(&mine.sm_count, cudaDevAttrMultiProcessorCount, device),
                  rank, "cudaDeviceGetAttribute(MultiProcessorCount)") ||
      cuda_failed(cudaStreamCreateWithFlags(&init_stream, cudaStreamNonBlocking), rank,
                  "cudaStreamCreateWithFlags")) {
    return ncclUnhandledCudaError;
  }

  peer_layout = PeerBlockLayout::make(ranks, config.staging_bytes, config.slots,
                                      static_cast<std::size_t>(mine.packet_capacity),
                                      PairGeometry{config.pair_chunk_bytes, config.pair_slots,
                                                   config.pair_packet_bytes, config.pair_packet_slots});
  void* block = nullptr;
  if (cuda_failed(cudaMalloc(&block, peer_layout.bytes), rank, "cudaMalloc(peer-visible block)")) {
    return ncclUnhandledCudaError;
  }
  peer_block = static_cast<std::byte*>(block);
  device_bytes += peer_layout.bytes;
  // Zero before anyone can see the block: a peer's first wait must not read garbage as a flag.
  if (cuda_failed(cudaMemsetAsync(peer_block, 0, peer_layout.bytes, init_stream), rank,
                  "cudaMemsetAsync(peer-visible block)") ||
      cuda_failed(cudaStreamSynchronize(init_stream), rank, "cudaStreamSynchronize")) {
    return ncclUnhandledCudaError;
  }
  mine.block = reinterpret_cast<std::uintptr_t>(peer_block);
  // Only peers in other processes need the IPC handle; a platform without CUDA IPC still
  // serves communicators within one process, so a failure here is reported by whoever needs it.
  const cudaError_t exported = cudaIpcGetMemHandle(&mine.ipc, peer_block);
  if (exported == cudaSuccess) {
    mine.exported = 1;
  } else {
    (void)cudaGetLastError();
    PURLIN_INFO(kP2p, "rank %d: cudaIpcGetMemHandle failed (%s): only same-process peers can map "
                "this rank's memory",
                rank, cudaGetErrorName(exported));
  }
  return ncclSuccess;
}

// Step 3a: the rank-local words and the control words.
ncclResult_t DeviceState::Impl::allocate_local(int ranks) {
  local_layout = LocalBlockLayout::make(ranks, config.slots, handle.packet_capacity,
                                        handle.epoch_slots);
  void* block = nullptr;
  if (cuda_failed(cudaMalloc(&block, local_layout.bytes), rank, "cudaMalloc(rank-local words)")) {
    return ncclUnhandledCudaError;
  }
  local_block = static_cast<std::byte*>(block);
  device_bytes += local_layout.bytes;
  if (cuda_failed(cudaMemsetAsync(local_block, 0, local_layout.bytes, init_stream), rank,
                  "cudaMemsetAsync(rank-local words)")) {
    return ncclUnhandledCudaError;
  }

  // Portable: ranks of one process may drive other GPUs and still abort through this word.
  void* host = nullptr;
  if (cuda_failed(cudaHostAlloc(&host, sizeof(ControlWords),
                                cudaHostAllocMapped | cudaHostAllocPortable),
                  rank, "cudaHostAlloc(control words)")) {
    return ncclUnhandledCudaError;
  }
  words = new (host) ControlWords{};
  void* dev = nullptr;
  if (cuda_failed(cudaHostGetDevicePointer(&dev, host, 0), rank, "cudaHostGetDevicePointer")) {
    return ncclUnhandledCudaError;
  }
  auto* dev_words = static_cast<ControlWords*>(dev);
  control.abort = &dev_words->abort;
  control.status = &dev_words->status;
  control.stall = &dev_words->stall;
  control.started = reinterpret_cast<snac::Epoch*>(local_block + local_layout.started.offset);
  control.timeout_ns = config.timeout_ns;
  control.check_every = config.poll_check_every;
  control.sleep_ns = config.poll_sleep_ns;
  control.backoff_every = config.poll_backoff_every;
  control.trace = trace.start(rank, handle.epoch_slots);
  control.trace_workers = handle.epoch_slots;

  handle.epochs = reinterpret_cast<snac::Epoch*>(local_block + local_layout.epochs.offset);
  handle.counters = reinterpret_cast<std::uint64_t*>(local_block + local_layout.counters.offset);
  handle.scratch = local_block + local_layout.scratch.offset;
  pair_handle.sequences = reinterpret_cast<std::uint64_t*>(local_block + local_layout.pair_sequences.offset);
  pair_handle.sequence_slots = handle.epoch_slots;
  return ncclSuccess;
}

// Step 3c: the device arrays of peer pointers the handle indexes by rank.
ncclResult_t DeviceState::Impl::publish_tables(int ranks) {
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<void*> table(6 * n);
  const std::vector<std::byte*>& bases = peers.bases();
  for (std::size_t r = 0; r < n; ++r) {
    table[r] = bases[r] + peer_layout.staging.offset;
    table[n + r] = bases[r] + peer_layout.signals.offset;
    table[2 * n + r] = bases[r] + peer_layout.packets.offset;
    table[3 * n + r] = bases[r] + peer_layout.pair_staging.offset;
    table[4 * n + r] = bases[r] + peer_layout.pair_signals.offset;
    table[5 * n + r] = bases[r] + peer_layout.pair_packets.offset;
  }
  const std::size_t bytes = table.size() * sizeof(void*);
  void* dev = nullptr;
  if (cuda_failed(cudaMalloc(&dev, bytes), rank, "cudaMalloc(peer pointer tables)")) {
    return ncclUnhandledCudaError;
  }
  peer_tables = static_cast<void**>(dev);
  device_bytes += bytes;
  if (cuda_failed(cudaMemcpyAsync(peer_tables, table.data(), bytes, cudaMemcpyHostToDevice,
                                  init_stream),
                  rank, "cudaMemcpyAsync(peer pointer tables)")) {
    return ncclUnhandledCudaError;
  }
  handle.staging = reinterpret_cast<std::byte* const*>(peer_tables);
  handle.signals = reinterpret_cast<snac::Flag* const*>(peer_tables + n);
  handle.packets = reinterpret_cast<snac::Packet* const*>(peer_tables + 2 * n);
  pair_handle.staging = reinterpret_cast<std::byte* const*>(peer_tables + 3 * n);
  pair_handle.signals = reinterpret_cast<snac::Flag* const*>(peer_tables + 4 * n);
  pair_handle.packets = reinterpret_cast<snac::Packet* const*>(peer_tables + 5 * n);
  return ncclSuccess;
}

// The local zeroing and the tables must have landed before the first launch reads them; a
// launch on another stream would not wait for the private init stream.
ncclResult_t DeviceState::Impl::finish_init() {
  if (cuda_failed(cudaStreamSynchronize(init_stream), rank, "cudaStreamSynchronize")) {
    return ncclUnhandledCudaError;
  }
  (void)cuda_failed(cudaStreamDestroy(init_stream), rank, "cudaStreamDestroy");
  init_stream = nullptr;
  return ncclSuccess;
}

void DeviceState::Impl::report(int ranks) const {
  const snac::Roles& t = policy.throughput;
  const snac::Roles& l = policy.latency;
  PURLIN_INFO(kInit,
      "rank %d: SNAC state on cudaDev %d: %zu B device memory = %zu peer-visible (staging %zu, "
      "signals %zu, packets %zu) + %zu local (epochs %d, counters %zu B, scratch %zu B) + %zu "
      "peer tables; %d ranks, %u slots, %zu packets; policy chunk %zu, packet chunk %zu, "
      "latency max %zu, one hop max %zu, ring depth %zu, spread min %zu, per-rank roles from %zu, roles %d/%d/%d/%d throughput (or %d workers split by "
      "bytes moved), %d/%d/%d/%d latency; zero-copy %s; point-to-point %zu B x %u slots per pair, packets up to %zu B x %u slots; timeout %llu ns",
      rank, device, device_bytes, peer_layout.bytes, peer_layout.staging.bytes,
      peer_layout.signals.bytes, peer_layout.packets.bytes, local_layout.bytes,
      handle.epoch_slots, local_layout.counters.bytes, local_layout.scratch.bytes,
      6 * static_cast<std::size_t>(ranks) * sizeof(void*), ranks, handle.slots,
      handle.packet_capacity, policy.chunk_bytes, policy.packet_chunk_bytes,
      policy.latency_max_bytes, policy.one_hop_max_bytes, policy.min_ring_slots,
      policy.spread_min_bytes, policy.rank_roles_min_bytes, t.stagers, t.consumers, t.finishers,
      t.team, policy.throughput_workers, l.stagers, l.consumers, l.finishers, l.team,
      !policy.zero_copy                ? "off (PURLIN_ZERO_COPY=0)"
      : handle.inputs_peer_visible     ? "on"
                                       : "off (ranks in several processes or on several GPUs)",
      pair_handle.chunk_bytes, pair_handle.slots, pair_handle.packet_chunk_bytes, pair_handle.packet_slots,
      static_cast<unsigned long long>(control.timeout_ns));
}

bool DeviceState::Impl::quiesce(std::optional<std::chrono::milliseconds> bound) {
  if (quiesced || leaked) return quiesced;
  DeviceGuard guard(device);
  quiesced = launches.wait(bound, rank, &exiting);
  return quiesced;
}

// Only this rank's launches use these, so they go as soon as those have ended.
void DeviceState::Impl::release_private() {
  if (device < 0 || leaked || exiting) return;
  DeviceGuard guard(device);
  trace.finish();  // this rank's launches have ended (quiesce)
  peers.close();
  launches.clear();
  if (init_stream != nullptr) {
    (void)cuda_failed(cudaStreamDestroy(init_stream), rank, "cudaStreamDestroy");
  }
  if (peer_tables != nullptr) (void)cuda_failed(cudaFree(peer_tables), rank, "cudaFree(tables)");
  if (local_block != nullptr) (void)cuda_failed(cudaFree(local_block), rank, "cudaFree(local)");
  if (words != nullptr) (void)cuda_failed(cudaFreeHost(words), rank, "cudaFreeHost(control)");
  init_stream = nullptr;
  peer_tables = nullptr;
  local_block = nullptr;
  words = nullptr;
}

// Peers' launches that may still read this rank's block are the caller's to order first
// (runtime/teardown.h); this rank's own are waited for here if teardown did not.
void DeviceState::Impl::release() {
  if (device < 0) return;  // never got a GPU: nothing was allocated
  if (!quiesce(std::nullopt)) return;
  if (leaked || exiting) return;  // a launch may still run; or process exit, where the driver reclaims it all
  release_private();
  if (peer_block != nullptr) {
    DeviceGuard guard(device);
    const cudaError_t e = cudaFree(peer_block);
    if (e == cudaErrorCudartUnloading) {
      (void)cudaGetLastError();
    } else {
      (void)cuda_failed(e, rank, "cudaFree(block)");
    }
  }
  peer_block = nullptr;
}

DeviceState::DeviceState() : impl_(std::make_unique<Impl>()) {}

DeviceState::~DeviceState() { impl_->release(); }

ncclResult_t DeviceState::create(Communicator& comm, const DeviceStateConfig& config,
                                 std::unique_ptr<DeviceState>* out) {
  if (out == nullptr) {
    PURLIN_WARN("DeviceState::create: out is null");
    return ncclInvalidArgument;
  }
  std::unique_ptr<DeviceState> state(new DeviceState());
  Impl& s = *state->impl_;
  const int ranks = comm.size();
  s.rank = comm.rank();
  s.device = comm.cuda_device();
  s.config = config;
  DeviceGuard guard(s.device);

  // Step 1 and the first exchange.
  PeerRecord mine;
  ncclResult_t local = ncclUnhandledCudaError;
  if (!cuda_failed(guard.status(), s.rank, "cudaSetDevice")) local = s.prepare(comm, mine);
  mine.ok = local == ncclSuccess ? 1 : 0;
  std::vector<PeerRecord> records(static_cast<std::size_t>(ranks));
  records[static_cast<std::size_t>(s.rank)] = mine;
  if (ncclResult_t r = comm.bootstrap().allgather(records.data(), sizeof(PeerRecord));
      r != ncclSuccess) {
    return r;
  }
  if (local != ncclSuccess) return local;
  if (ncclResult_t r = check_records(records, s.rank); r != ncclSuccess) return r;
  warn_if_queues_are_shared(records, s.rank);

  // Step 3: policy, local memory, mappings, tables.
  const policy::Facts facts = agreed_facts(records);
  s.policy = policy::select(facts, config.ctas);
  if (s.rank == 0 && !policy::coresident(s.policy, facts)) {
    PURLIN_WARN("%d ranks share a GPU of %d SMs: a launch needs up to %d CTAs per rank, one "
                "per SM, so not every rank's CTAs can be resident and a collective may hang; "
                "use fewer ranks per GPU",
                facts.ranks_on_gpu, facts.sm_count, policy::max_workers(s.policy));
  }
  s.handle.rank = s.rank;
  s.handle.ranks = ranks;
  s.handle.staging_bytes = config.staging_bytes;
  s.handle.slots = config.slots;
  s.handle.packet_capacity = packet_capacity(config.packet_bytes);
  s.handle.epoch_slots = std::max(config.epoch_slots, policy::max_workers(s.policy));
  s.handle.inputs_peer_visible = one_address_space_and_gpu(records);
  s.pair_handle.rank = s.rank;
  s.pair_handle.ranks = ranks;
  s.pair_handle.chunk_bytes = config.pair_chunk_bytes;
  s.pair_handle.slots = config.pair_slots;
  s.pair_handle.packet_chunk_bytes = config.pair_packet_bytes;
  s.pair_handle.packet_slots = config.pair_packet_slots;
  local = s.allocate_local(ranks);
  s.control.gpu_scope = s.handle.inputs_peer_visible ? 1u : 0u;
  if (local == ncclSuccess) local = s.peers.open(records, s.rank);
  if (local == ncclSuccess) local = s.publish_tables(ranks);
  if (local == ncclSuccess) local = s.finish_init();

  // Step 4: the second exchange.
  std::vector<Verdict> verdicts(static_cast<std::size_t>(ranks));
  verdicts[static_cast<std::size_t>(s.rank)] = Verdict::of(local == ncclSuccess, s.policy);
  if (ncclResult_t r = comm.bootstrap().allgather(verdicts.data(), sizeof(Verdict));
      r != ncclSuccess) {
    return r;
  }
  if (local != ncclSuccess) return local;
  if (ncclResult_t r = check_verdicts(verdicts, s.rank); r != ncclSuccess) return r;

  s.report(ranks);
  *out = std::move(state);
  return ncclSuccess;
}

const snac::Handle& DeviceState::handle() const { return impl_->handle; }
const snac::PairHandle& DeviceState::pair_handle() const { return impl_->pair_handle; }
int DeviceState::pair_workers() const {
  const int policy_budget = policy::max_workers(impl_->policy);
  const int budget = impl_->config.pair_max_workers > 0 ? std::min(impl_->config.pair_max_workers, policy_budget) : policy_budget;
  return std::min(budget, impl_->pair_handle.sequence_slots);
}
snac::DeviceControl DeviceState::control() const { return impl_->control; }
const snac::Policy& DeviceState::policy() const { return impl_->policy; }
std::size_t DeviceState::device_bytes() const { return impl_->device_bytes; }

void DeviceState::launched_on(cudaStream_t stream) { impl_->launches.record(stream, impl_->rank); }

bool DeviceState::quiesce(std::optional<std::chrono::milliseconds> bound) { return impl_->quiesce(bound); }

void DeviceState::release_private() {
  if (impl_->quiesced) impl_->release_private();
}

void DeviceState::leak() { impl_->leaked = true; }

void DeviceState::abort() {
  if (impl_->words != nullptr) static_cast<volatile unsigned&>(impl_->words->abort) = 1;
}

snac::Status DeviceState::status() const {
  if (impl_->words == nullptr) return snac::Status::ok;
  return to_status(static_cast<const volatile unsigned&>(impl_->words->status));
}

std::string DeviceState::stall_report() const {
  const Impl& s = *impl_;
  if (s.words == nullptr) return "";
  const volatile snac::StallRecord& r = s.words->stall;
  if (r.filled == 0) return "";
  std::atomic_thread_fence(std::memory_order_acquire);  // the fields were written before `filled`
  snac::StallRecord record;
  std::memcpy(static_cast<void*>(&record), const_cast<const snac::StallRecord*>(&r), sizeof(record));
  const auto base = reinterpret_cast<std::uintptr_t>(s.peers.bases()[static_cast<std::size_t>(s.rank)]);
  const PolledWords words{s.handle.signal_layout(),
                          s.handle.packet_layout(),
                          s.pair_handle.signal_layout(),
                          s.pair_handle.packet_layout(),
                          base + s.peer_layout.signals.offset,
                          base + s.peer_layout.packets.offset,
                          base + s.peer_layout.pair_signals.offset,
                          base + s.peer_layout.pair_packets.offset};
  return describe_stall(record, words);
}

}  // namespace purlin::runtime
