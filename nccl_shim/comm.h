// The object behind ncclComm_t: Purlin's communicator plus what the shim needs to honor
// the NCCL contract (config, asynchronous init state, the native device state when Purlin's
// kernels run the collectives, the lazily created real-NCCL communicator that forwarded
// calls run on).
#pragma once

#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "launch/kernel_smem.h"
#include "runtime/communicator.h"
#include "runtime/device_state.h"
#include "user_ops.h"

struct ncclComm {
  // Known from the creating call, before the group has formed.
  int rank = 0;
  int nranks = 0;
  int cuda_device = -1;
  bool blocking = true;
  ncclConfig_t config{};     // the user's config with defaults filled in
  std::string comm_name;     // owns config.commName's text
  std::string net_name;      // owns config.netName's text
  // Of the unique id the ranks met through: equal on every rank, different for every
  // communicator (ncclCommQueryProperties' commHash). Set when init starts.
  std::uint64_t id_hash = 0;

  // ncclInProgress until init finishes, then its result; later an asynchronous error.
  std::atomic<ncclResult_t> state{ncclInProgress};
  std::unique_ptr<purlin::runtime::Communicator> core;  // set once init succeeded
  std::thread init_thread;  // nonblocking init runs here; joined before destruction

  // Native route (router.h: comm_route): the SNAC device state the collectives run on.
  // Declared after `core` so that it is destroyed first. Null on forwarded communicators
  // and after ncclCommFinalize, which frees it.
  std::unique_ptr<purlin::runtime::DeviceState> native;
  // The shared memory its kernels launch with on this rank's GPU (launch::load_kernels).
  purlin::launch::KernelSmem native_smem;

  // Native communicators: the thread that notices a peer process dying (peer_watch.h), and
  // the rank it found, or -1.
  std::thread watch_thread;
  std::mutex watch_mu;
  std::condition_variable watch_cv;
  bool watch_stop = false;  // under watch_mu
  std::atomic<int> lost_rank{-1};

  std::atomic<bool> revoked{false};
  std::atomic<bool> finalized{false};  // ncclCommFinalize ran: no more communication calls
  std::atomic<bool> suspended{false};  // ncclCommSuspend(NCCL_SUSPEND_MEM) until ncclCommResume

  // Forwarding to the real NCCL. Created at the first forwarded call on this
  // communicator; every rank makes the same calls in the same order (the NCCL contract),
  // so that first call is reached by all ranks and the creation stays collective.
  std::mutex real_mu;
  std::atomic<ncclComm_t> real{nullptr};
  ncclResult_t real_status = ncclSuccess;  // sticky failure of the real init

  // Reduction operators created on this communicator (ncclRedOpCreatePreMulSum).
  purlin::shim::UserOps user_ops;
};

namespace purlin::shim {

// Communicators that exist and have not been destroyed; lets every entry point tell a
// live handle from a stale or garbage one without touching freed memory.
void live_add(ncclComm* c);
void live_remove(ncclComm* c);
bool live_contains(const ncclComm* c);

// A live communicator whose init has completed successfully; otherwise fails with one
// WARN naming `fn` (ncclInvalidArgument for null/unknown, ncclInvalidUsage for a
// communicator that is still initializing, failed, or was revoked).
ncclResult_t check_ready(const char* fn, const ncclComm* c);
// A live communicator in any state (for destroy, abort, async-error queries).
ncclResult_t check_live(const char* fn, const ncclComm* c);

// Real-NCCL communicators that Purlin created (ncclComm::real). The real NCCL calls parts
// of its own public API internally (ncclCommGetAsyncError before enqueueing, ncclCommRegister
// for windows, ncclBroadcast for ncclBcast). When the application itself loaded that
// library into the global symbol scope (PyTorch preloads its NCCL wheel), those internal
// calls bind to Purlin's exported symbols and carry a real handle. passthrough()
// recognizes such a handle so the call goes straight back to the real NCCL.
void real_handle_add(ncclComm_t real);
void real_handle_remove(ncclComm_t real);
// `comm` as a real handle when it is one Purlin created (and not a Purlin communicator);
// nullptr otherwise.
ncclComm_t passthrough(const void* comm);

// Joins a pending init and the peer watcher, and frees the communicator (after live_remove).
void delete_comm(ncclComm* c);

}  // namespace purlin::shim
