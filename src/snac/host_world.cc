#include "snac/host_world.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace purlin::snac {

// A reusable barrier for one rank's workers. Mutex-based rather than std::barrier so that
// ThreadSanitizer sees the happens-before edge it creates between consecutive calls.
class HostWorld::RankBarrier {
 public:
  explicit RankBarrier(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

HostWorld::HostWorld(const HostWorldConfig& config) : config_(config), control_(config.timeout) {
  const auto n = static_cast<std::size_t>(config.ranks);
  memory_.resize(n);
  const SignalLayout sig{config.ranks, config.slots};
  const PacketLayout pk{config.ranks, config.packet_capacity};
  const CounterLayout ctr{config.ranks, config.slots};
  for (RankMemory& m : memory_) {
    m.staging.assign(config.staging_bytes, std::byte{0});
    m.signals.assign(sig.words(), 0);
    m.packets.assign(pk.packets(), Packet{0, 0});
    m.epochs.assign(static_cast<std::size_t>(config.workers), 0);
    m.counters.assign(ctr.words(), 0);
    m.scratch.assign(pk.scratch_bytes(), std::byte{0});
    m.pair_staging.assign(static_cast<std::size_t>(config.ranks) * config.pair_slots * config.pair_chunk_bytes,
                          std::byte{0});
    m.pair_signals.assign(PairSignalLayout{config.ranks, config.pair_slots, config.pair_packet_slots}.words(), 0);
    m.pair_packets.assign(
        PairPacketLayout{config.ranks, config.pair_packet_slots, config.pair_packet_bytes / kPacketPayload}.packets(),
        Packet{0, 0});
    m.pair_sequences.assign(static_cast<std::size_t>(config.workers) * n * kPairCounters, 0);
    pair_staging_.push_back(m.pair_staging.data());
    pair_signals_.push_back(m.pair_signals.data());
    pair_packets_.push_back(m.pair_packets.data());
    staging_.push_back(m.staging.data());
    signals_.push_back(m.signals.data());
    packets_.push_back(m.packets.data());
  }
  for (int r = 0; r < config.ranks; ++r) {
    RankMemory& m = memory_[static_cast<std::size_t>(r)];
    Handle h;
    h.rank = r;
    h.ranks = config.ranks;
    h.staging = staging_.data();
    h.signals = signals_.data();
    h.packets = packets_.data();
    h.staging_bytes = config.staging_bytes;
    h.slots = config.slots;
    h.packet_capacity = config.packet_capacity;
    h.inputs_peer_visible = config.inputs_peer_visible;
    h.epochs = m.epochs.data();
    h.epoch_slots = config.workers;
    h.counters = m.counters.data();
    h.scratch = m.scratch.data();
    handles_.push_back(h);
    PairHandle p;
    p.rank = r;
    p.ranks = config.ranks;
    p.staging = pair_staging_.data();
    p.signals = pair_signals_.data();
    p.chunk_bytes = config.pair_chunk_bytes;
    p.slots = config.pair_slots;
    p.packets = pair_packets_.data();
    p.packet_chunk_bytes = config.pair_packet_bytes;
    p.packet_slots = config.pair_packet_slots;
    p.sequences = m.pair_sequences.data();
    p.sequence_slots = config.workers;
    pair_handles_.push_back(p);
  }
}

HostWorld::~HostWorld() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  job_posted_.notify_all();
  for (std::thread& t : pool_) t.join();
}

Status HostWorld::run(int calls, const Launch& launch, int threads) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (pool_.empty()) {  // started on first use, so that a world that never runs costs nothing
    for (int r = 0; r < config_.ranks; ++r) {
      for (int w = 0; w < config_.workers; ++w) pool_.emplace_back([this, r, w] { work(r, w); });
    }
  }
  job_threads_ = threads > 0 && threads < config_.workers ? threads : config_.workers;
  barriers_.clear();
  for (int r = 0; r < config_.ranks; ++r) {
    barriers_.push_back(std::make_unique<RankBarrier>(job_threads_));
  }
  job_calls_ = calls;
  job_launch_ = &launch;
  first_failure_ = Status::ok;
  pending_ = config_.ranks * config_.workers;
  ++job_id_;
  job_posted_.notify_all();
  job_done_.wait(lock, [&] { return pending_ == 0; });
  job_launch_ = nullptr;
  return first_failure_;
}

void HostWorld::work(int rank, int worker) {
  const HostBackend be(control_, handle(rank), worker);
  std::uint64_t done = 0;
  for (;;) {
    int calls = 0;
    bool active = false;
    const Launch* launch = nullptr;
    RankBarrier* barrier = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      job_posted_.wait(lock, [&] { return stopping_ || job_id_ != done; });
      if (stopping_) return;
      done = job_id_;
      calls = job_calls_;
      active = worker < job_threads_;
      launch = job_launch_;
      barrier = barriers_[static_cast<std::size_t>(rank)].get();
    }
    for (int call = 0; active && call < calls; ++call) {
      const Status s = control_.aborted() ? Status::aborted : (*launch)(rank, call, be);
      if (s != Status::ok) {
        std::lock_guard<std::mutex> lock(mutex_);
        // A named failure outranks the aborts it caused in other workers.
        if (first_failure_ == Status::ok || first_failure_ == Status::aborted) first_failure_ = s;
        // A worker that fails outside a wait (a bad plan) must still release the others.
        if (s != Status::aborted) control_.abort(std::string("launch failed: ") + to_string(s));
      }
      barrier->arrive_and_wait();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (--pending_ == 0) job_done_.notify_all();
  }
}

}  // namespace purlin::snac
