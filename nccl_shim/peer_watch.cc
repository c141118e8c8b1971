#include "peer_watch.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "errors.h"
#include "threads.h"

namespace purlin::shim {
namespace {

// PyTorch's watchdog polls ncclCommGetAsyncError about every 100 ms and expects ncclCommAbort
// to return within a second of its decision; noticing a loss within a tenth of a second keeps
// the whole reaction well inside that. A check is one non-blocking poll of a few sockets.
constexpr std::chrono::milliseconds kPeriod{100};

// The state moves before the abort word is set: the kernels' "aborted" status must not reach
// ncclCommGetAsyncError first, or it would report that (ncclSystemError) instead of the peer.
void on_peer_lost(ncclComm* c, int lost) {
  c->lost_rank.store(lost, std::memory_order_release);
  ncclResult_t expected = ncclSuccess;
  if (c->state.compare_exchange_strong(expected, ncclRemoteError, std::memory_order_acq_rel)) {
    fail(ncclRemoteError, "ncclCommGetAsyncError", "%s", describe_lost(c, lost).c_str());
  }
  if (c->native != nullptr) c->native->abort();
}

void watch(ncclComm* c) {
  std::unique_lock lock(c->watch_mu);
  for (;;) {
    c->watch_cv.wait_for(lock, kPeriod, [c] { return c->watch_stop; });
    if (c->watch_stop) return;
    if (const int lost = c->core->bootstrap().lost_peer(); lost >= 0) {
      on_peer_lost(c, lost);
      return;
    }
  }
}

}  // namespace

std::string describe_lost(const ncclComm* c, int lost) {
  const purlin::runtime::PeerInfo& p = c->core->peers()[static_cast<std::size_t>(lost)];
  char text[400];
  std::snprintf(text, sizeof(text),
                "comm %p rank %d: rank %d (pid %lld, cudaDev %d, busId %s) stopped: its bootstrap connection "
                "closed without a farewell (its process died); this communicator's native collectives were "
                "aborted; ncclCommAbort it",
                static_cast<const void*>(c), c->rank, lost, static_cast<long long>(p.pid), p.cuda_device,
                p.pci_bus_id[0] != '\0' ? p.pci_bus_id : "?");
  return text;
}

// Both under watch_mu: an abort of a communicator still initializing on another thread may
// stop the watcher before, or while, init starts it.
void start_peer_watch(ncclComm* c) {
  std::lock_guard lock(c->watch_mu);
  if (c->watch_stop) return;
  (void)start_thread("ncclCommInitRank", &c->watch_thread, [c] { watch(c); }, [](ncclResult_t) noexcept {});
}

void stop_peer_watch(ncclComm* c) {
  std::thread watcher;
  {
    std::lock_guard lock(c->watch_mu);
    c->watch_stop = true;
    watcher = std::move(c->watch_thread);
  }
  c->watch_cv.notify_all();
  if (watcher.joinable()) watcher.join();
}

}  // namespace purlin::shim
