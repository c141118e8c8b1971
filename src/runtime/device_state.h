// A communicator's SNAC device state (DESIGN §5): the peer-visible block every rank maps
// (staging halves, signal words, packet buffers), the rank-local words (epochs, team counters,
// latency scratch), the launch control (abort and status words, host-mapped), and the policy
// sized so that every rank sharing this GPU stays co-resident. It hands out the plain-data
// snac::Handle that kernels take by value.
//
// Peers in this process are reached through their pointers (peer access enabled when they run
// on another GPU); peers in other processes through CUDA IPC handles exchanged over the
// bootstrap. All words start zeroed and are never reset (snac/handle.h).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "policy/policy.h"
#include "runtime/teardown.h"
#include "snac/handle.h"
#include "snac/pairs.h"
#include "snac/plan.h"
#include "snac/policy.h"

namespace purlin::runtime {

class Communicator;

struct DeviceStateConfig {
  std::size_t staging_bytes = 0;    // per rank, both halves (PURLIN_STAGING_BYTES)
  std::uint32_t slots = 0;          // ring-slot capacity of signals and counters
  std::size_t packet_bytes = 0;     // latency payload per (phase, half, producer) (PURLIN_PACKET_BYTES)
  std::size_t pair_chunk_bytes = 0;  // point-to-point chunk (PURLIN_P2P_CHUNK_BYTES)
  std::uint32_t pair_slots = 0;      // point-to-point ring slots per pair (PURLIN_P2P_SLOTS)
  std::size_t pair_packet_bytes = 0;  // point-to-point packet payload per slot (PURLIN_P2P_PACKET_BYTES)
  std::uint32_t pair_packet_slots = 0;
  int pair_max_workers = 0;          // CTAs of a point-to-point launch, 0: the collectives' budget (PURLIN_P2P_CTAS)
  int epoch_slots = 0;              // the most CTAs one launch may use
  std::uint64_t timeout_ns = 0;     // per device wait; 0 = until aborted (PURLIN_TIMEOUT_S)
  std::uint32_t poll_check_every = 0;  // polls between abort checks (PURLIN_POLL_CHECK_EVERY)
  std::uint32_t poll_sleep_ns = 0;     // backoff at each check (PURLIN_POLL_SLEEP_NS)
  std::uint32_t poll_backoff_every = 0;  // polls between backoffs, 0: at checks only (PURLIN_POLL_BACKOFF_EVERY)
  // The config's minCTAs/maxCTAs under NCCL_MIN_CTAS/NCCL_MAX_CTAS; not from_env's: the shim,
  // which holds the config, sets them.
  policy::CtaBounds ctas;

  // Defaults (each with its reason in device_state.cc) overridden by the environment.
  static DeviceStateConfig from_env();
};

class DeviceState final : public RetiringState {
 public:
  // Collective over the communicator (bootstrap allgather of mapping handles). Requires every
  // rank to have a GPU on this host.
  static ncclResult_t create(Communicator& comm, const DeviceStateConfig& config,
                             std::unique_ptr<DeviceState>* out);
  ~DeviceState() override;
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  const snac::Handle& handle() const;
  // Point-to-point (snac/pairs.h): its memory, and the most CTAs one of its launches may use
  // (the collectives' budget, so that every rank sharing a GPU stays co-resident).
  const snac::PairHandle& pair_handle() const;
  int pair_workers() const;
  snac::DeviceControl control() const;
  const snac::Policy& policy() const;

  // Every launch on this state calls this after it (not for launches captured into a CUDA
  // graph: their replays are the application's to finish before destroy, as with NCCL). One
  // event per stream, re-recorded, lets teardown wait for this communicator's work only.
  void launched_on(cudaStream_t stream);
  // Waits until every launch recorded by launched_on has finished; with a bound, gives up
  // after it. True when they all have (or the process is exiting, or the context is broken,
  // which ends them too): then nothing of this rank reads any memory of this state.
  bool quiesce(std::optional<std::chrono::milliseconds> bound) override;
  // After quiesce: unmaps the peers' blocks and frees this rank's private memory (tables,
  // local words, control words, events). The peer-visible block stays until destruction,
  // which the caller delays until no peer may read it (runtime/teardown.h).
  void release_private() override;
  // Teardown could not make sure this rank's launches ended: destruction frees nothing, since
  // a kernel may still run on this memory (it is reclaimed at process exit).
  void leak() override;

  // Makes every wait of this rank's running and future launches give up (ncclCommAbort).
  void abort() override;
  // First non-ok status any launch of this rank reported (snac::Status::ok if none). Does not
  // synchronize: the word is host-mapped.
  snac::Status status() const;
  // The first wait of this rank's launches that gave up, named (which peer's word, the value
  // waited for and the one seen), or empty if none did. Does not synchronize.
  std::string stall_report() const;
  // Device memory this rank allocated (reported at INFO at creation).
  std::size_t device_bytes() const;

 private:
  DeviceState();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace purlin::runtime
