#include "group.h"

#include <algorithm>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "comm.h"
#include "errors.h"
#include "forward.h"
#include "native.h"
#include "threads.h"

namespace purlin::shim {
namespace {

// A job and the communicator it initializes (for ensure_real_comm jobs: the ready one it
// serves, whose state a failure leaves alone).
struct CommJob {
  ncclComm* comm;
  InitJob run;
};

struct GroupState {
  int depth = 0;
  std::vector<CommJob> inits;
  std::vector<Descriptor> native_ops;
  std::vector<Descriptor> ops;  // forwarded
};

thread_local GroupState t_group;

// A job that failed without publishing its result (it threw, or its thread never started)
// must still end its communicator's init, or ncclCommGetAsyncError would report
// ncclInProgress forever. Called only then: a job that returned has published its state, and
// the application may have destroyed the communicator since.
void settle_init(ncclComm* c, ncclResult_t r) noexcept {
  ncclResult_t initializing = ncclInProgress;
  c->state.compare_exchange_strong(initializing, r, std::memory_order_acq_rel);
}

// Runs each job in its own thread and returns the first failure. Jobs are collective
// across threads of this process, so running them one after another could deadlock.
// A single job gets a thread too: init binds its thread near the GPU, and that must
// not change the affinity of the application's thread. Nothing between the first start
// and the joins may throw: a joinable std::thread destroyed unjoined calls std::terminate.
ncclResult_t run_concurrently(const char* fn, std::vector<CommJob>& jobs) {
  std::vector<ncclResult_t> results(jobs.size(), ncclSuccess);
  std::vector<std::thread> threads(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    (void)start_thread(
        fn, &threads[i], [&jobs, &results, i] { results[i] = jobs[i].run(); },
        [&jobs, &results, i](ncclResult_t r) noexcept {
          results[i] = r;
          settle_init(jobs[i].comm, r);
        });
  }
  for (std::thread& t : threads)
    if (t.joinable()) t.join();
  for (ncclResult_t r : results)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}

// The recorded calls, issued to the real NCCL inside one real group so that matching
// sends and receives (and multi-communicator groups) progress together.
ncclResult_t issue_ops(const char* fn, std::vector<Descriptor>& ops, ncclSimInfo_t* sim) {
  if (ops.empty()) {
    if (sim != nullptr) sim->estimatedTime = 0.0f;
    return ncclSuccess;
  }
  const RealNccl* rn = nullptr;
  if (ncclResult_t r = require_real(fn, &rn); r != ncclSuccess) return r;
  // Only the first group on a communicator pays for threads: later ones find it created.
  std::set<ncclComm*> missing;
  for (const Descriptor& d : ops)
    if (d.comm->real.load(std::memory_order_acquire) == nullptr) missing.insert(d.comm);
  std::vector<CommJob> creates;
  for (ncclComm* c : missing) creates.push_back({c, [fn, c] { return ensure_real_comm(fn, c); }});
  if (!creates.empty()) {
    if (ncclResult_t r = run_concurrently(fn, creates); r != ncclSuccess) return r;
  }

  ncclResult_t res = rn->GroupStart();
  if (res != ncclSuccess) return res;
  for (const Descriptor& d : ops) {
    res = forward_now(d);
    if (res != ncclSuccess) break;
  }
  // The real group is always closed, also after a failure, so the real NCCL's thread
  // state stays balanced.
  ncclResult_t end = sim ? call_real(fn, rn->GroupSimulateEnd, sim) : rn->GroupEnd();
  return res != ncclSuccess ? res : end;
}

// Native kernels wait on peers only through device memory, so launching them before the
// forwarded calls cannot block the host; a failure stops the group like a forwarded one.
// A simulated end runs nothing: the real NCCL estimates its own calls only.
//
// Collectives go first, in recorded order; then each communicator's sends and receives as one
// launch, in the order the communicators first appear. Every rank of a communicator makes the
// same collectives, so placing its point-to-point launch after them on every rank means no
// rank's collective can wait behind a peer's point-to-point launch that waits for it.
ncclResult_t issue_native_ops(const std::vector<Descriptor>& ops, ncclSimInfo_t* sim) {
  if (sim != nullptr) return ncclSuccess;
  std::vector<std::vector<Descriptor>> pairs;  // per communicator
  for (const Descriptor& d : ops) {
    if (!is_p2p(d.kind)) {
      if (ncclResult_t r = issue_native(d); r != ncclSuccess) return r;
      continue;
    }
    auto it = std::find_if(pairs.begin(), pairs.end(),
                           [&](const std::vector<Descriptor>& p) { return p.front().comm == d.comm; });
    if (it == pairs.end()) {
      pairs.push_back({d});
    } else {
      it->push_back(d);
    }
  }
  for (const std::vector<Descriptor>& p : pairs) {
    if (ncclResult_t r = issue_native_pairs(p); r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

ncclResult_t complete_group(const char* fn, std::vector<CommJob> inits, std::vector<Descriptor> native_ops,
                            std::vector<Descriptor> ops, ncclSimInfo_t* sim) {
  ncclResult_t res = inits.empty() ? ncclSuccess : run_concurrently(fn, inits);
  if (res != ncclSuccess) return res;
  if (ncclResult_t r = issue_native_ops(native_ops, sim); r != ncclSuccess) return r;
  return issue_ops(fn, ops, sim);
}

}  // namespace

bool in_group() { return t_group.depth > 0; }

ncclResult_t group_start() {
  ++t_group.depth;
  return ncclSuccess;
}

ncclResult_t group_end(const char* fn, ncclSimInfo_t* sim) {
  if (t_group.depth == 0) return fail(ncclInvalidUsage, fn, "called without a matching ncclGroupStart");
  if (--t_group.depth > 0) return ncclSuccess;
  std::vector<CommJob> inits = std::exchange(t_group.inits, {});
  std::vector<Descriptor> native_ops = std::exchange(t_group.native_ops, {});
  std::vector<Descriptor> ops = std::exchange(t_group.ops, {});

  bool nonblocking = false;
  for (const CommJob& j : inits) nonblocking |= !j.comm->blocking;
  if (nonblocking && sim == nullptr) {
    // NCCL's contract: the group returns ncclInProgress and the application polls each
    // communicator with ncclCommGetAsyncError. The init jobs publish their own state; a
    // background that fails before they can (or never starts) publishes its failure instead.
    // After the jobs only the group's calls can fail it, and those still hold the
    // communicators, so they are alive when the failure is published (a CAS that then
    // changes nothing).
    std::vector<ncclComm*> comms;
    for (const CommJob& j : inits) comms.push_back(j.comm);
    std::thread background;
    const ncclResult_t started = start_thread(
        fn, &background,
        [fn, inits = std::move(inits), native_ops = std::move(native_ops), ops = std::move(ops)]() mutable {
          (void)complete_group(fn, std::move(inits), std::move(native_ops), std::move(ops), nullptr);
        },
        [comms = std::move(comms)](ncclResult_t r) noexcept {
          for (ncclComm* c : comms) settle_init(c, r);
        });
    if (started != ncclSuccess) return started;
    background.detach();
    return ncclInProgress;
  }
  return complete_group(fn, std::move(inits), std::move(native_ops), std::move(ops), sim);
}

ncclResult_t submit_init(const char* fn, ncclComm* c, InitJob job) {
  if (in_group()) {
    t_group.inits.push_back({c, std::move(job)});
    return ncclSuccess;
  }
  if (!c->blocking) {
    const ncclResult_t started = start_thread(
        fn, &c->init_thread, [job = std::move(job)] { (void)job(); },
        [c](ncclResult_t r) noexcept { settle_init(c, r); });
    return started != ncclSuccess ? started : ncclInProgress;
  }
  std::vector<CommJob> jobs{{c, std::move(job)}};
  return run_concurrently(fn, jobs);
}

void cancel_init(const ncclComm* c) {
  std::erase_if(t_group.inits, [c](const CommJob& j) { return j.comm == c; });
}

void defer_op(const Descriptor& d, bool native) { (native ? t_group.native_ops : t_group.ops).push_back(d); }

}  // namespace purlin::shim
