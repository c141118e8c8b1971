#include "comm.h"

#include <shared_mutex>
#include <unordered_set>

#include "errors.h"
#include "peer_watch.h"

namespace purlin::shim {
namespace {

std::shared_mutex& live_mu() {
  static std::shared_mutex mu;
  return mu;
}
std::unordered_set<const ncclComm*>& live_set() {
  static auto* set = new std::unordered_set<const ncclComm*>();  // never destroyed: used at exit
  return *set;
}

std::unordered_set<const void*>& real_set() {
  static auto* set = new std::unordered_set<const void*>();
  return *set;
}

}  // namespace

void real_handle_add(ncclComm_t real) {
  std::unique_lock lock(live_mu());
  real_set().insert(real);
}

void real_handle_remove(ncclComm_t real) {
  std::unique_lock lock(live_mu());
  real_set().erase(real);
}

ncclComm_t passthrough(const void* comm) {
  if (comm == nullptr) return nullptr;
  std::shared_lock lock(live_mu());
  if (live_set().count(static_cast<const ncclComm*>(comm)) != 0 || real_set().count(comm) == 0) return nullptr;
  return static_cast<ncclComm_t>(const_cast<void*>(comm));
}

void live_add(ncclComm* c) {
  std::unique_lock lock(live_mu());
  live_set().insert(c);
}

void live_remove(ncclComm* c) {
  std::unique_lock lock(live_mu());
  live_set().erase(c);
}

bool live_contains(const ncclComm* c) {
  std::shared_lock lock(live_mu());
  return live_set().count(c) != 0;
}

ncclResult_t check_live(const char* fn, const ncclComm* c) {
  if (c == nullptr) return fail(ncclInvalidArgument, fn, "comm is NULL");
  if (!live_contains(c))
    return fail(ncclInvalidArgument, fn, "comm %p is not a live communicator (destroyed or never created)",
                static_cast<const void*>(c));
  return ncclSuccess;
}

ncclResult_t check_ready(const char* fn, const ncclComm* c) {
  if (ncclResult_t r = check_live(fn, c); r != ncclSuccess) return r;
  ncclResult_t st = c->state.load(std::memory_order_acquire);
  if (st == ncclInProgress)
    return fail(ncclInvalidUsage, fn, "comm %p is still initializing (poll ncclCommGetAsyncError)",
                static_cast<const void*>(c));
  // NCCL answers a call on a communicator in error with that error (ncclCommEnsureReady), which
  // is how a caller that never polls ncclCommGetAsyncError learns that a peer died.
  if (st != ncclSuccess) {
    if (const int lost = c->lost_rank.load(std::memory_order_acquire); lost >= 0 && st == ncclRemoteError)
      return fail(st, fn, "%s", describe_lost(c, lost).c_str());
    return fail(st, fn, "comm %p is in error state %d (its asynchronous error); ncclCommAbort it",
                static_cast<const void*>(c), static_cast<int>(st));
  }
  if (c->core == nullptr)
    return fail(ncclInvalidUsage, fn, "comm %p has no core (init failed)", static_cast<const void*>(c));
  if (c->revoked.load(std::memory_order_acquire))
    return fail(ncclInvalidUsage, fn, "comm %p was revoked", static_cast<const void*>(c));
  return ncclSuccess;
}

void delete_comm(ncclComm* c) {
  if (c->init_thread.joinable()) c->init_thread.join();
  stop_peer_watch(c);  // started by the init just joined
  delete c;
}

}  // namespace purlin::shim
