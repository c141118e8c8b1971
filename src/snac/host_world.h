// A communicator of n ranks in one process for the host backend: it owns every rank's staging,
// signal, packet, epoch, counter and scratch memory and hands out the plain-data Handles a GPU
// runtime would fill with IPC-mapped pointers. `run` plays the launches: per rank, `workers`
// threads stand in for the CTAs, and consecutive calls of one rank are separated only by a
// rank-local barrier, which is the order a CUDA stream gives. Ranks are never synchronized with
// each other, so a rank may enter call i+1 while its peers are still in call i, as on GPUs.
// The threads live as long as the world (starting threads dominates small runs, above all
// under ThreadSanitizer); between runs they sleep on a condition variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "snac/engine.h"
#include "snac/handle.h"
#include "snac/host_backend.h"
#include "snac/pairs.h"
#include "snac/planner.h"
#include "snac/policy.h"

namespace purlin::snac {

struct HostWorldConfig {
  int ranks = 1;
  std::size_t staging_bytes = 1 << 20;  // per rank, both halves
  std::uint32_t slots = 64;             // ring-slot capacity of signals and counters
  std::size_t packet_capacity = 1024;   // packets per (phase, half, producer); 0: no latency
  int workers = 8;                      // threads per rank (the most CTAs a launch may use)
  bool inputs_peer_visible = true;      // threads share one address space (Handle)
  std::size_t pair_chunk_bytes = 1024;  // point-to-point (pairs.h): bytes per chunk
  std::uint32_t pair_slots = 3;         // and ring slots per (sender, receiver)
  std::size_t pair_packet_bytes = 96;   // transfers up to this size travel as packets
  std::uint32_t pair_packet_slots = 2;
  std::chrono::milliseconds timeout{30000};
};

class HostWorld {
 public:
  using Launch = std::function<Status(int rank, int call, const HostBackend& backend)>;

  explicit HostWorld(const HostWorldConfig& config);
  ~HostWorld();
  HostWorld(const HostWorld&) = delete;
  HostWorld& operator=(const HostWorld&) = delete;

  const HostWorldConfig& config() const { return config_; }
  const Handle& handle(int rank) const { return handles_[static_cast<std::size_t>(rank)]; }
  const PairHandle& pair_handle(int rank) const { return pair_handles_[static_cast<std::size_t>(rank)]; }
  const HostControl& control() const { return control_; }

  // Runs calls 0 .. calls-1 on every rank, each by `threads` threads per rank (0: one per epoch
  // slot, config().workers; fewer save thread start-up, which dominates small host tests).
  // Returns the first failing status of any worker (Status::ok when all succeeded); after a
  // failure the world's protocol state is undefined and it must not run again.
  Status run(int calls, const Launch& launch, int threads = 0);

 private:
  struct RankMemory {
    std::vector<std::byte> staging;
    std::vector<Flag> signals;
    std::vector<Packet> packets;
    std::vector<Epoch> epochs;
    std::vector<std::uint64_t> counters;
    std::vector<std::byte> scratch;
    std::vector<std::byte> pair_staging;
    std::vector<Flag> pair_signals;
    std::vector<Packet> pair_packets;
    std::vector<std::uint64_t> pair_sequences;
  };

  class RankBarrier;
  void work(int rank, int worker);

  HostWorldConfig config_;
  HostControl control_;

  // The pool and the job it runs; guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable job_posted_;
  std::condition_variable job_done_;
  std::uint64_t job_id_ = 0;
  int job_calls_ = 0;
  int job_threads_ = 0;
  const Launch* job_launch_ = nullptr;
  int pending_ = 0;
  bool stopping_ = false;
  Status first_failure_ = Status::ok;
  std::vector<std::unique_ptr<RankBarrier>> barriers_;
  std::vector<std::thread> pool_;

  std::vector<RankMemory> memory_;
  std::vector<std::byte*> staging_;
  std::vector<Flag*> signals_;
  std::vector<Packet*> packets_;
  std::vector<Handle> handles_;
  std::vector<std::byte*> pair_staging_;
  std::vector<Flag*> pair_signals_;
  std::vector<Packet*> pair_packets_;
  std::vector<PairHandle> pair_handles_;
};

// One worker's part of one call: plan (the same chunking on every rank, roles per rank), then
// run the engine if this worker is part of the launch. Threads beyond its workers sit it out.
template <class C, class E, class Op = op::Sum>
Status host_launch(const HostBackend& be, const Handle& h, const Policy& policy,
                   const Args<C, E>& args) {
  const PlanResult planned = make_plan(policy_for_op<Op>(policy), h, args);
  if (planned.status != Status::ok) return planned.status;
  if (be.worker() >= planned.plan.workers()) return Status::ok;
  return run<C, E, Op>(be, h, planned.plan, args);
}

// One worker's part of a point-to-point launch (pairs.h); workers beyond the launch's sit it out.
template <int N>
Status host_pair_launch(const HostBackend& be, const PairHandle& h, const PairLaunch<N>& launch) {
  if (be.worker() >= launch.workers) return Status::ok;
  return run_pairs(be, h, launch);
}

}  // namespace purlin::snac
