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

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "policy/policy.h"
#include "snac/handle.h"
#include "snac/plan.h"
#include "snac/policy.h"

namespace purlin::runtime {

class Communicator;

struct DeviceStateConfig {
  std::size_t staging_bytes = 0;    // per rank, both halves (PURLIN_STAGING_BYTES)
  std::uint32_t slots = 0;          // ring-slot capacity of signals and counters
  std::size_t packet_bytes = 0;     // latency payload per (phase, half, producer) (PURLIN_PACKET_BYTES)
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

class DeviceState {
 public:
  // Collective over the communicator (bootstrap allgather of mapping handles). Requires every
  // rank to have a GPU on this host.
  static ncclResult_t create(Communicator& comm, const DeviceStateConfig& config,
                             std::unique_ptr<DeviceState>* out);
  ~DeviceState();
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  const snac::Handle& handle() const;
  snac::DeviceControl control() const;
  const snac::Policy& policy() const;

  // Makes every wait of this rank's running and future launches give up (ncclCommAbort).
  void abort();
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
