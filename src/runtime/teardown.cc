#include "runtime/teardown.h"

#include <chrono>
#include <exception>
#include <thread>
#include <utility>

#include "base/log.h"
#include "runtime/bootstrap/root.h"

namespace purlin::runtime {
namespace {

using std::chrono::milliseconds;

// ncclCommAbort returns within a second (NCCL's contract, which PyTorch's watchdog relies on).
// Aborted kernels leave their waits at the next abort check, microseconds apart, so half of it
// is ample for them; a farewell is a few bytes into connections that are already open.
constexpr milliseconds kAbortLaunchBound{500};
constexpr milliseconds kFarewellBound{200};

// What the background thread owns; the caller keeps a reference, so that a thread that cannot
// start frees nothing on its way out.
struct Pending {
  std::unique_ptr<RetiringState> state;
  std::shared_ptr<Bootstrap> bootstrap;
  bool release_private = false;  // not done by the caller yet
};

void free_when_peers_left(Pending& p) {
  if (p.release_private) p.state->release_private();
  const milliseconds bound{std::chrono::seconds(bootstrap_timeout_s())};
  if (p.bootstrap->await_farewells(bound) != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d: a peer has neither left nor died within %lld s "
                "(PURLIN_BOOTSTRAP_TIMEOUT): this rank's peer-visible SNAC memory stays allocated, since that "
                "peer may still read it",
                p.bootstrap->rank(), static_cast<long long>(bound.count() / 1000));
    p.state->leak();
  }
  p.state.reset();
}

}  // namespace

void retire(std::unique_ptr<RetiringState> state, std::shared_ptr<Bootstrap> bootstrap, Ending how) {
  if (state == nullptr) return;
  if (how == Ending::kAbort) state->abort();
  const bool ended = state->quiesce(how == Ending::kAbort ? std::optional(kAbortLaunchBound) : std::nullopt);
  if (!ended) {
    PURLIN_WARN("rank %d: this communicator's kernels are still running %lld ms after the abort: its SNAC memory "
                "stays allocated, and the peers keep theirs",
                bootstrap->rank(), static_cast<long long>(kAbortLaunchBound.count()));
    state->leak();
    return;
  }
  if (!bootstrap->farewell(kFarewellBound)) {
    // Another thread is inside a bootstrap call of this communicator (a split of it, say).
    // Without a farewell the peers keep their memory, so this rank keeps its own too.
    PURLIN_WARN("rank %d: the bootstrap stayed busy in another thread's call for %lld ms: no farewell was "
                "said, and this communicator's SNAC memory stays allocated",
                bootstrap->rank(), static_cast<long long>(kFarewellBound.count()));
    state->leak();
    return;
  }
  // An abort leaves even the frees to the background: cudaFree may wait for other work of this
  // process's context on the GPU, and ncclCommAbort must not.
  if (how == Ending::kDestroy) {
    state->release_private();
    if (bootstrap->all_departed()) return;  // `state` frees the block on its way out
  }
  const int rank = bootstrap->rank();
  std::shared_ptr<Pending> pending;
  try {
    pending = std::make_shared<Pending>();
    pending->state = std::move(state);
    pending->bootstrap = std::move(bootstrap);
    pending->release_private = how == Ending::kAbort;
    std::thread([pending] { free_when_peers_left(*pending); }).detach();
  } catch (const std::exception& e) {
    PURLIN_WARN("rank %d: cannot start the thread that frees the SNAC memory once every peer has left (%s): "
                "it stays allocated",
                rank, e.what());
    if (pending != nullptr && pending->state != nullptr) pending->state->leak();
    if (state != nullptr) state->leak();
  }
}

}  // namespace purlin::runtime
