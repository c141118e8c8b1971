// Purlin's bootstrap: how the ranks of a communicator find each other before any GPU memory is
// shared, and the small host-side collectives the runtime needs while setting up (exchanging
// peer info, IPC handles, barriers).
//
// create_unique_id starts a root rendezvous thread and returns an id naming it; every rank calls
// Bootstrap::create with that id; afterwards the ranks talk directly (see mesh.h). Ranks may be
// threads of one process (each its own Bootstrap object) or separate processes.
//
// Threading: the calls of a Bootstrap object are serialized (a call from a second thread waits for
// the first). abort() and lost_peer() never wait: abort() may be called from any thread while
// another is blocked, lost_peer() from a watcher thread; neither concurrently with destruction.
#pragma once

#include <nccl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace purlin::runtime {

class Mesh;

// Fills the 128-byte id: magic, a 16-byte random secret (getrandom), and the root's listen address.
// Starts a detached root rendezvous thread listening on that address; the thread lives until the
// group it serves has formed (or its timeout passes) and then exits and closes its socket.
ncclResult_t create_unique_id(ncclUniqueId* out);

// True if the id has Purlin's magic (used to validate user-supplied ids).
bool unique_id_valid(const ncclUniqueId& id);

class Bootstrap {
 public:
  // Blocking rendezvous of `nranks` ranks through the root named in `id`. Fails (never hangs
  // forever) after PURLIN_BOOTSTRAP_TIMEOUT seconds (default 300).
  // Errors: ncclInvalidArgument for a bad id / rank / nranks, or when the root refuses this rank
  // (duplicate rank, nranks differing from the group's); ncclRemoteError when the root or a peer
  // goes away, the process at the root's address cannot prove it knows the id's secret, or the
  // timeout passes; ncclSystemError for local socket failures.
  static ncclResult_t create(const ncclUniqueId& id, int rank, int nranks, std::unique_ptr<Bootstrap>* out);
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int size() const { return nranks_; }

  // Collectives: every rank calls the same ones in the same order. A rank that fails one tells
  // the ranks waiting on it, so they fail at once too, blaming the same rank (blamed_peer()).
  // In place: rank r's contribution is at offset r * bytes_per_rank on every rank.
  ncclResult_t allgather(void* data, size_t bytes_per_rank);
  ncclResult_t broadcast(void* data, size_t bytes, int root);
  ncclResult_t barrier();
  // Messages between a pair keep their order per tag; a message for another tag or peer that
  // arrives first is buffered. recv expects exactly `bytes`: another size is ncclInvalidUsage.
  // Every operation fails with ncclRemoteError after PURLIN_BOOTSTRAP_TIMEOUT seconds. The first
  // send to a peer returns without waiting for it; a later one waits until the peer has answered
  // the connection's handshake, which it does inside any of its own bootstrap calls.
  ncclResult_t send(int peer, int tag, const void* data, size_t bytes);
  ncclResult_t recv(int peer, int tag, void* data, size_t bytes);
  // Collective: every rank sends every other one an empty message, so that each holds a
  // connection from every peer for the group's life; lost_peer() watches those connections.
  ncclResult_t connect_all();
  // The first rank whose connection ended without its farewell (its process died), or -1;
  // -1 also while another thread is inside a call, which notices a lost peer itself. Does not
  // wait.
  int lost_peer();
  // Leaving the group: farewell() tells every peer that this rank is done (it reads no peer's
  // memory any more), within `bound`; false when another thread's call held the bootstrap for
  // all of it, and nothing was said. await_farewells() waits up to `bound` until every peer
  // has said farewell or ended (ncclRemoteError naming the missing ones otherwise). Ranks
  // need not say farewell at the same time, nor in the same order as their other calls.
  bool farewell(std::chrono::milliseconds bound);
  ncclResult_t await_farewells(std::chrono::milliseconds bound);
  // Whether every peer has said farewell or ended by now. Does not wait.
  bool all_departed();
  // Makes blocked and future calls return ncclRemoteError promptly (ncclCommAbort).
  void abort();
  // After a call failed with ncclRemoteError: the rank to blame (one that went away, timed out
  // or broke the protocol, or that a peer reported as failed), or -1 if none is known.
  int blamed_peer() const;

 private:
  Bootstrap(int rank, int nranks, std::unique_ptr<Mesh> mesh);
  template <typename Body, typename Dependents>
  ncclResult_t collective(const char* op, Body&& body, Dependents&& dependents);
  ncclResult_t ring_allgather(void* data, size_t bytes_per_rank, int tag);
  ncclResult_t tree_broadcast(void* data, size_t bytes, int root, int tag);
  ncclResult_t dissemination_barrier(int tag);
  // The ranks that receive from this one in a broadcast from `root`.
  std::vector<int> tree_children(int root) const;

  int rank_;
  int nranks_;
  std::timed_mutex mu_;  // serializes the calls (not abort)
  std::unique_ptr<Mesh> mesh_;
  uint32_t next_collective_ = 0;  // the tag of the next collective; equal on every rank
};

}  // namespace purlin::runtime
