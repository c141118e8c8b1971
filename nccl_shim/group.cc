#include "group.h"

#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "comm.h"
#include "errors.h"
#include "forward.h"
#include "native.h"

namespace purlin::shim {
namespace {

struct PendingInit {
  ncclComm* comm;
  InitJob job;
};

struct GroupState {
  int depth = 0;
  std::vector<PendingInit> inits;
  std::vector<Descriptor> native_ops;
  std::vector<Descriptor> ops;  // forwarded
};

thread_local GroupState t_group;

// Runs each task in its own thread and returns the first failure. Tasks are collective
// across threads of this process, so running them one after another could deadlock.
// A single task gets a thread too: init binds its thread near the GPU, and that must
// not change the affinity of the application's thread.
ncclResult_t run_concurrently(std::vector<std::function<ncclResult_t()>>& tasks) {
  std::vector<ncclResult_t> results(tasks.size(), ncclSuccess);
  std::vector<std::thread> threads;
  threads.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i)
    threads.emplace_back([&, i] { results[i] = tasks[i](); });
  for (auto& t : threads) t.join();
  for (ncclResult_t r : results)
    if (r != ncclSuccess) return r;
  return ncclSuccess;
}

// The recorded calls, issued to the real NCCL inside one real group so that matching
// sends and receives (and multi-communicator groups) progress together.
ncclResult_t issue_ops(std::vector<Descriptor>& ops, ncclSimInfo_t* sim) {
  const char* fn = sim ? "ncclGroupSimulateEnd" : "ncclGroupEnd";
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
  std::vector<std::function<ncclResult_t()>> creates;
  for (ncclComm* c : missing) creates.emplace_back([fn, c] { return ensure_real_comm(fn, c); });
  if (!creates.empty()) {
    if (ncclResult_t r = run_concurrently(creates); r != ncclSuccess) return r;
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
ncclResult_t issue_native_ops(const std::vector<Descriptor>& ops, ncclSimInfo_t* sim) {
  if (sim != nullptr) return ncclSuccess;
  for (const Descriptor& d : ops) {
    if (ncclResult_t r = issue_native(d); r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

ncclResult_t complete_group(std::vector<PendingInit> inits, std::vector<Descriptor> native_ops,
                            std::vector<Descriptor> ops, ncclSimInfo_t* sim) {
  std::vector<std::function<ncclResult_t()>> jobs;
  for (PendingInit& p : inits) jobs.push_back(std::move(p.job));
  ncclResult_t res = jobs.empty() ? ncclSuccess : run_concurrently(jobs);
  if (res != ncclSuccess) return res;
  if (ncclResult_t r = issue_native_ops(native_ops, sim); r != ncclSuccess) return r;
  return issue_ops(ops, sim);
}

}  // namespace

bool in_group() { return t_group.depth > 0; }

ncclResult_t group_start() {
  ++t_group.depth;
  return ncclSuccess;
}

ncclResult_t group_end(ncclSimInfo_t* sim) {
  const char* fn = sim ? "ncclGroupSimulateEnd" : "ncclGroupEnd";
  if (t_group.depth == 0) return fail(ncclInvalidUsage, fn, "called without a matching ncclGroupStart");
  if (--t_group.depth > 0) return ncclSuccess;
  std::vector<PendingInit> inits = std::exchange(t_group.inits, {});
  std::vector<Descriptor> native_ops = std::exchange(t_group.native_ops, {});
  std::vector<Descriptor> ops = std::exchange(t_group.ops, {});

  bool nonblocking = false;
  for (const PendingInit& p : inits) nonblocking |= !p.comm->blocking;
  if (nonblocking && sim == nullptr) {
    // NCCL's contract: the group returns ncclInProgress and the application polls each
    // communicator with ncclCommGetAsyncError. The init jobs publish their own state.
    std::thread([inits = std::move(inits), native_ops = std::move(native_ops), ops = std::move(ops)]() mutable {
      (void)complete_group(std::move(inits), std::move(native_ops), std::move(ops), nullptr);
    }).detach();
    return ncclInProgress;
  }
  return complete_group(std::move(inits), std::move(native_ops), std::move(ops), sim);
}

ncclResult_t submit_init(ncclComm* c, InitJob job) {
  if (in_group()) {
    t_group.inits.push_back({c, std::move(job)});
    return ncclSuccess;
  }
  if (!c->blocking) {
    c->init_thread = std::thread([c, job = std::move(job)] { (void)job(); });
    return ncclInProgress;
  }
  std::vector<std::function<ncclResult_t()>> jobs{std::move(job)};
  return run_concurrently(jobs);
}

void defer_op(const Descriptor& d, bool native) { (native ? t_group.native_ops : t_group.ops).push_back(d); }

}  // namespace purlin::shim
