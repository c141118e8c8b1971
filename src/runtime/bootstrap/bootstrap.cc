#include "runtime/bootstrap/bootstrap.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/log.h"
#include "runtime/bootstrap/auth.h"
#include "runtime/bootstrap/frame.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/root.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

constexpr wire::Channel kCollective = wire::Channel::kCollective;

// Buffering a message allocates; running out of memory becomes an error code, not an exception
// escaping into the NCCL entry points.
template <typename F>
ncclResult_t no_throw(int rank, const char* op, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    PURLIN_WARN("bootstrap rank %d: %s failed: %s", rank, op, e.what());
    return ncclSystemError;
  }
}

// One attempt at the rank's side of the root handshake (wire.h). `*retry` is set when the root
// closed the connection before answering: a full root evicts unanswered connections.
ncclResult_t greet_root(const UniqueIdContents& id, const wire::RootHello& hello, net::Deadline deadline,
                        net::Socket* root, bool* retry) {
  const std::string root_name = "the root at " + id.root.str();
  const auth::Key key = auth::root_key(id.secret);
  if (ncclResult_t r = net::connect_to(id.root, deadline, nullptr, net::Refused::kRetry, root); r != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d/%d: cannot reach %s", hello.rank, hello.nranks, root_name.c_str());
    return r;
  }
  const auto hello_header = wire::make_header(wire::kRootMagic, wire::FrameType::kRootHello, sizeof(hello));
  if (ncclResult_t r = wire::send_frame(root->fd(), hello_header, &hello, deadline, nullptr, "the hello to the root");
      r != ncclSuccess) {
    return r;
  }
  wire::FrameReader reader;
  const wire::Expect challenge =
      wire::expect_exactly(wire::kRootMagic, wire::FrameType::kChallenge, sizeof(wire::Challenge));
  if (ncclResult_t r = wire::recv_frame(root->fd(), reader, challenge, deadline, nullptr, root_name,
                                        "the root's challenge", retry);
      r != ncclSuccess) {
    return r;
  }
  // The root proves it knows the secret before this rank proves anything, so a process that
  // merely listens at the root's address learns nothing it could use.
  const auto c = reader.body_as<wire::Challenge>();
  if (!auth::verify(key, auth::Role::kRoot, &hello, sizeof(hello), c.nonce, c.mac)) {
    PURLIN_WARN("bootstrap rank %d/%d: %s failed to prove it knows the group secret: it is not this group's root "
                "(or the id was altered)", hello.rank, hello.nranks, root_name.c_str());
    return ncclRemoteError;
  }
  const wire::Proof proof{auth::prove(key, auth::Role::kRank, &hello, sizeof(hello), c.nonce)};
  return wire::send_frame(root->fd(), wire::make_header(wire::kRootMagic, wire::FrameType::kProof, sizeof(proof)),
                          &proof, deadline, nullptr, "the proof to the root");
}

ncclResult_t join_root(const UniqueIdContents& id, int rank, int nranks, const net::Address& listen,
                       net::Deadline deadline, std::vector<Mesh::PeerAddress>* peers, wire::Nonce* group) {
  const std::string root_name = "the root at " + id.root.str();
  wire::RootHello hello{{}, rank, nranks, listen.to_wire(), {}};
  if (ncclResult_t r = auth::random_bytes(&hello.nonce, sizeof(hello.nonce)); r != ncclSuccess) return r;
  if (ncclResult_t r = auth::random_bytes(&hello.accept_nonce, sizeof(hello.accept_nonce)); r != ncclSuccess) {
    return r;
  }
  net::Socket root;
  for (int backoff_ms = 1;; backoff_ms = std::min(backoff_ms * 2, 100)) {
    bool retry = false;
    ncclResult_t r = greet_root(id, hello, deadline, &root, &retry);
    if (r == ncclSuccess) break;
    if (!retry || net::Clock::now() + std::chrono::milliseconds(backoff_ms) >= deadline) {
      if (retry) PURLIN_WARN("bootstrap rank %d/%d: %s kept closing the connection", rank, nranks, root_name.c_str());
      return r;
    }
    PURLIN_TRACE(kBootstrap, "bootstrap rank %d/%d: %s closed the connection before its challenge; retrying", rank,
                 nranks, root_name.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
  }
  wire::FrameReader reader;
  const wire::Expect reply_frame =
      wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootReply, sizeof(wire::RootReply));
  if (ncclResult_t r = wire::recv_frame(root.fd(), reader, reply_frame, deadline, nullptr, root_name,
                                        "the wait for the group to form");
      r != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d/%d: rendezvous through %s failed (ranks missing, or the root gave up)", rank,
                nranks, root_name.c_str());
    return r;
  }
  const auto reply = reader.body_as<wire::RootReply>();
  switch (static_cast<wire::RootStatus>(reply.status)) {
    case wire::RootStatus::kOk:
      break;
    case wire::RootStatus::kNranksMismatch:
      PURLIN_WARN("bootstrap rank %d: nranks %d differs from the group's nranks %d", rank, nranks, reply.nranks);
      return ncclInvalidArgument;
    case wire::RootStatus::kDuplicateRank:
      PURLIN_WARN("bootstrap rank %d/%d: another process or thread already joined as rank %d", rank, nranks, rank);
      return ncclInvalidArgument;
    default:
      PURLIN_WARN("bootstrap rank %d/%d: %s refused the rank (status %d)", rank, nranks, root_name.c_str(),
                  reply.status);
      return ncclInvalidArgument;
  }
  if (reply.nranks != nranks) {
    PURLIN_WARN("bootstrap rank %d/%d: %s answered for %d ranks", rank, nranks, root_name.c_str(), reply.nranks);
    return ncclRemoteError;
  }
  const wire::Expect table_frame = wire::expect_exactly(wire::kRootMagic, wire::FrameType::kRootTable,
                                                        static_cast<uint64_t>(nranks) * sizeof(wire::TableEntry));
  if (ncclResult_t r = wire::recv_frame(root.fd(), reader, table_frame, deadline, nullptr, root_name,
                                        "the address table from the root");
      r != ncclSuccess) {
    return r;
  }
  peers->resize(nranks);
  for (int i = 0; i < nranks; ++i) {
    wire::TableEntry e;
    std::memcpy(&e, reader.body().data() + i * sizeof(e), sizeof(e));
    (*peers)[i].accept_nonce = e.accept_nonce;
    if (!net::Address::from_wire(e.listen, &(*peers)[i].addr)) {
      PURLIN_WARN("bootstrap rank %d/%d: %s sent an unusable address for rank %d", rank, nranks, root_name.c_str(), i);
      return ncclRemoteError;
    }
  }
  *group = reply.group;
  return ncclSuccess;
}

ncclResult_t create_checked(const UniqueIdContents& id, int rank, int nranks, std::unique_ptr<Mesh>* mesh) {
  const int timeout_s = bootstrap_timeout_s();
  const net::Deadline deadline = net::deadline_after(timeout_s);
  net::LocalAddress local;
  if (ncclResult_t r = net::choose_local_address(&local); r != ncclSuccess) return r;
  net::Socket listener;
  net::Address listen;
  if (ncclResult_t r = net::listen_on(local.addr, &listener, &listen); r != ncclSuccess) return r;
  PURLIN_INFO(kBootstrap, "bootstrap rank %d/%d: listening on %s %s", rank, nranks, local.ifname.c_str(),
              listen.str().c_str());
  std::vector<Mesh::PeerAddress> peers;
  wire::Nonce group;
  if (ncclResult_t r = join_root(id, rank, nranks, listen, deadline, &peers, &group); r != ncclSuccess) return r;
  return Mesh::create(rank, std::move(peers), auth::mesh_key(id.secret, group), std::move(listener), timeout_s,
                      mesh);
}

}  // namespace

ncclResult_t Bootstrap::create(const ncclUniqueId& id, int rank, int nranks, std::unique_ptr<Bootstrap>* out) {
  if (out == nullptr) {
    PURLIN_WARN("bootstrap: create given a null output pointer");
    return ncclInvalidArgument;
  }
  out->reset();
  UniqueIdContents contents;
  if (!decode_unique_id(id, &contents)) {
    PURLIN_WARN("bootstrap: the unique id is not a Purlin id (bad magic or root address)");
    return ncclInvalidArgument;
  }
  if (nranks <= 0 || nranks > wire::kMaxRanks) {
    PURLIN_WARN("bootstrap: nranks %d is outside [1, %d]", nranks, wire::kMaxRanks);
    return ncclInvalidArgument;
  }
  if (rank < 0 || rank >= nranks) {
    PURLIN_WARN("bootstrap: rank %d is outside [0, %d)", rank, nranks);
    return ncclInvalidArgument;
  }
  try {
    std::unique_ptr<Mesh> mesh;
    if (ncclResult_t r = create_checked(contents, rank, nranks, &mesh); r != ncclSuccess) return r;
    out->reset(new Bootstrap(rank, nranks, std::move(mesh)));
  } catch (const std::exception& e) {
    PURLIN_WARN("bootstrap rank %d/%d: %s", rank, nranks, e.what());
    return ncclSystemError;
  }
  PURLIN_INFO(kBootstrap, "bootstrap rank %d/%d: rendezvous done through root %s", rank, nranks,
              contents.root.str().c_str());
  return ncclSuccess;
}

Bootstrap::Bootstrap(int rank, int nranks, std::unique_ptr<Mesh> mesh)
    : rank_(rank), nranks_(nranks), mesh_(std::move(mesh)) {}

Bootstrap::~Bootstrap() = default;

void Bootstrap::abort() { mesh_->abort(); }

int Bootstrap::lost_peer() {
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return -1;
  try {
    return mesh_->lost_peer();
  } catch (const std::exception& e) {
    PURLIN_WARN("bootstrap rank %d: watching the peers failed: %s", rank_, e.what());
    return -1;
  }
}

bool Bootstrap::farewell(std::chrono::milliseconds bound) {
  const net::Deadline deadline = net::Clock::now() + bound;
  std::unique_lock lock(mu_, deadline);
  if (!lock.owns_lock()) return false;
  no_throw(rank_, "farewell", [&] {
    mesh_->farewell(deadline);
    return ncclSuccess;
  });
  return true;
}

ncclResult_t Bootstrap::await_farewells(std::chrono::milliseconds bound) {
  std::lock_guard lock(mu_);
  return no_throw(rank_, "await_farewells", [&] { return mesh_->await_farewells(net::Clock::now() + bound); });
}

bool Bootstrap::all_departed() {
  std::lock_guard lock(mu_);
  try {
    return mesh_->all_departed();
  } catch (const std::exception& e) {
    PURLIN_WARN("bootstrap rank %d: checking for farewells failed: %s", rank_, e.what());
    return false;
  }
}

ncclResult_t Bootstrap::send(int peer, int tag, const void* data, size_t bytes) {
  std::lock_guard lock(mu_);
  mesh_->forget_blame();
  return no_throw(rank_, "send", [&] { return mesh_->send(peer, wire::Channel::kUser, tag, data, bytes); });
}

ncclResult_t Bootstrap::recv(int peer, int tag, void* data, size_t bytes) {
  std::lock_guard lock(mu_);
  mesh_->forget_blame();
  return no_throw(rank_, "recv", [&] { return mesh_->recv(peer, wire::Channel::kUser, tag, data, bytes); });
}

// Every rank calls the same collectives in the same order, so numbering them gives each one a
// tag of its own on every rank. Two consecutive collectives (split's two allgathers) can then
// never pair up: a rank that gave up the first and went on to the second is recognized as such,
// not mistaken for a message of the wrong size. A failed rank also tells the ranks that wait on
// it in this collective (`dependents`), so that they fail at once, naming the rank to blame.
template <typename Body, typename Dependents>
ncclResult_t Bootstrap::collective(const char* op, Body&& body, Dependents&& dependents) {
  std::lock_guard lock(mu_);
  const int tag = static_cast<int>(next_collective_++);
  mesh_->forget_blame();
  const ncclResult_t r = no_throw(rank_, op, [&] { return body(tag); });
  if (r != ncclSuccess) {
    const int culprit = r == ncclRemoteError && mesh_->blamed() >= 0 ? mesh_->blamed() : rank_;
    no_throw(rank_, op, [&] {
      mesh_->notify_abandoned(tag, culprit, dependents());
      return ncclSuccess;
    });
    if (r == ncclRemoteError && culprit != rank_) {
      PURLIN_WARN("bootstrap rank %d: %s (collective #%d) failed: %s is gone or failed", rank_, op, tag,
                  mesh_->describe(culprit).c_str());
    }
  }
  return r;
}

int Bootstrap::blamed_peer() const { return mesh_->blamed(); }

ncclResult_t Bootstrap::allgather(void* data, size_t bytes_per_rank) {
  return collective(
      "allgather", [&](int tag) { return ring_allgather(data, bytes_per_rank, tag); },
      [&] { return std::vector<int>{(rank_ + 1) % nranks_}; });
}

ncclResult_t Bootstrap::broadcast(void* data, size_t bytes, int root) {
  return collective(
      "broadcast", [&](int tag) { return tree_broadcast(data, bytes, root, tag); },
      [&] { return tree_children(root); });
}

// Every rank's first send to a peer opens the connection without waiting for it, so sending
// to all before receiving cannot deadlock.
ncclResult_t Bootstrap::connect_all() {
  return collective(
      "connect_all",
      [&](int tag) {
        for (int dist = 1; dist < nranks_; ++dist) {
          if (ncclResult_t r = mesh_->send((rank_ + dist) % nranks_, kCollective, tag, nullptr, 0); r != ncclSuccess) {
            return r;
          }
        }
        for (int dist = 1; dist < nranks_; ++dist) {
          if (ncclResult_t r = mesh_->recv((rank_ - dist + nranks_) % nranks_, kCollective, tag, nullptr, 0);
              r != ncclSuccess) {
            return r;
          }
        }
        return ncclSuccess;
      },
      [&] {
        std::vector<int> others;
        for (int p = 0; p < nranks_; ++p) {
          if (p != rank_) others.push_back(p);
        }
        return others;
      });
}

ncclResult_t Bootstrap::barrier() {
  return collective(
      "barrier", [&](int tag) { return dissemination_barrier(tag); },
      [&] {
        std::vector<int> targets;
        for (int dist = 1; dist < nranks_; dist <<= 1) targets.push_back((rank_ + dist) % nranks_);
        return targets;
      });
}

// Ring: in step s each rank passes on the slot it received in step s-1. A rank talks to two
// neighbours only (2 connections rather than n-1) and moves (n-1) slots, the minimum; the n-1
// latency steps are negligible next to communicator setup for the rank counts of one NVLink domain.
ncclResult_t Bootstrap::ring_allgather(void* data, size_t bytes_per_rank, int tag) {
  if (data == nullptr && bytes_per_rank > 0) {
    PURLIN_WARN("bootstrap rank %d: allgather of %zu bytes per rank into a null buffer", rank_, bytes_per_rank);
    return ncclInvalidArgument;
  }
  auto* base = static_cast<uint8_t*>(data);
  const int n = nranks_;
  const int next = (rank_ + 1) % n;
  const int prev = (rank_ + n - 1) % n;
  for (int step = 0; step < n - 1; ++step) {
    const size_t send_slot = static_cast<size_t>((rank_ - step + n) % n);
    const size_t recv_slot = static_cast<size_t>((rank_ - step - 1 + n) % n);
    ncclResult_t r = mesh_->send(next, kCollective, tag, base + send_slot * bytes_per_rank, bytes_per_rank);
    if (r == ncclSuccess) {
      r = mesh_->recv(prev, kCollective, tag, base + recv_slot * bytes_per_rank, bytes_per_rank);
    }
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

// Binomial tree rooted at `root`: ceil(log2 n) rounds instead of a ring's n-1, and no rank sends
// more than ceil(log2 n) copies. Bootstrap broadcasts are small (configuration, handles), so it is
// latency, not bandwidth, that counts.
ncclResult_t Bootstrap::tree_broadcast(void* data, size_t bytes, int root, int tag) {
  const int n = nranks_;
  if (root < 0 || root >= n || (data == nullptr && bytes > 0)) {
    PURLIN_WARN("bootstrap rank %d: broadcast of %zu bytes at %p from root %d of %d: invalid argument", rank_, bytes,
                data, root, n);
    return ncclInvalidArgument;
  }
  const int vrank = (rank_ - root + n) % n;  // position in the tree, root at 0
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if ((vrank & mask) != 0) {
      const int parent = (vrank - mask + root) % n;
      if (ncclResult_t r = mesh_->recv(parent, kCollective, tag, data, bytes); r != ncclSuccess) return r;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vrank + mask < n) {
      const int child = (vrank + mask + root) % n;
      if (ncclResult_t r = mesh_->send(child, kCollective, tag, data, bytes); r != ncclSuccess) return r;
    }
  }
  return ncclSuccess;
}

std::vector<int> Bootstrap::tree_children(int root) const {
  const int n = nranks_;
  if (root < 0 || root >= n) return {};
  const int vrank = (rank_ - root + n) % n;
  int mask = 1;
  while (mask < n && (vrank & mask) == 0) mask <<= 1;
  std::vector<int> children;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vrank + mask < n) children.push_back((vrank + mask + root) % n);
  }
  return children;
}

// Dissemination: in round k every rank signals rank + 2^k and waits for rank - 2^k; after
// ceil(log2 n) rounds each rank has heard, transitively, from every other. Within one barrier the
// distances differ, so a peer's messages cannot pair with another round of the same barrier, and
// the collective's number keeps them apart from the next barrier's.
ncclResult_t Bootstrap::dissemination_barrier(int tag) {
  const int n = nranks_;
  for (int dist = 1; dist < n; dist <<= 1) {
    ncclResult_t r = mesh_->send((rank_ + dist) % n, kCollective, tag, nullptr, 0);
    if (r == ncclSuccess) r = mesh_->recv((rank_ - dist + n) % n, kCollective, tag, nullptr, 0);
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

}  // namespace purlin::runtime
