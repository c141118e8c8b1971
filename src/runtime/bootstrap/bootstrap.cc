#include "runtime/bootstrap/bootstrap.h"

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "runtime/bootstrap/interface.h"
#include "runtime/bootstrap/mesh.h"
#include "runtime/bootstrap/root.h"
#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/unique_id.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime {
namespace {

// One tag per algorithm on the collective channel, so that mismatched collectives across ranks
// surface as a size or tag mismatch instead of silently pairing up.
constexpr int kAllgatherTag = 1;
constexpr int kBroadcastTag = 2;
constexpr int kBarrierTag = 3;

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

ncclResult_t join_root(const UniqueIdContents& id, int rank, int nranks, const net::Address& listen,
                       net::Deadline deadline, std::vector<net::Address>* peers) {
  const std::string root_name = id.root.str();
  net::Socket root;
  if (ncclResult_t r = net::connect_to(id.root, deadline, nullptr, net::Refused::kRetry, &root); r != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d/%d: cannot reach the root at %s", rank, nranks, root_name.c_str());
    return r;
  }
  const wire::RootHello hello{wire::kRootHelloMagic, id.secret, rank, nranks, listen.to_wire()};
  wire::RootReply reply{};
  ncclResult_t r = net::send_all(root.fd(), &hello, sizeof(hello), deadline, nullptr, "the hello to the root");
  if (r == ncclSuccess) {
    r = net::recv_all(root.fd(), &reply, sizeof(reply), deadline, nullptr, "the wait for the group to form");
  }
  if (r != ncclSuccess) {
    PURLIN_WARN("bootstrap rank %d/%d: rendezvous through the root at %s failed (ranks missing, the root gave "
                "up, or the id's secret is wrong)", rank, nranks, root_name.c_str());
    return r;
  }
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
      PURLIN_WARN("bootstrap rank %d/%d: the root at %s refused the rank (status %d)", rank, nranks,
                  root_name.c_str(), reply.status);
      return ncclInvalidArgument;
  }
  if (reply.nranks != nranks) {
    PURLIN_WARN("bootstrap rank %d/%d: the root answered for %d ranks", rank, nranks, reply.nranks);
    return ncclRemoteError;
  }
  std::vector<net::WireAddress> table(nranks);
  r = net::recv_all(root.fd(), table.data(), table.size() * sizeof(net::WireAddress), deadline, nullptr,
                    "the address table from the root");
  if (r != ncclSuccess) return r;
  peers->resize(nranks);
  for (int i = 0; i < nranks; ++i) {
    if (!net::Address::from_wire(table[i], &(*peers)[i])) {
      PURLIN_WARN("bootstrap rank %d/%d: the root sent an unusable address for rank %d", rank, nranks, i);
      return ncclRemoteError;
    }
  }
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
  std::vector<net::Address> peers;
  if (ncclResult_t r = join_root(id, rank, nranks, listen, deadline, &peers); r != ncclSuccess) return r;
  return Mesh::create(rank, std::move(peers), id.secret, std::move(listener), timeout_s, mesh);
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

ncclResult_t Bootstrap::send(int peer, int tag, const void* data, size_t bytes) {
  return no_throw(rank_, "send", [&] { return mesh_->send(peer, wire::Channel::kUser, tag, data, bytes); });
}

ncclResult_t Bootstrap::recv(int peer, int tag, void* data, size_t bytes) {
  return no_throw(rank_, "recv", [&] { return mesh_->recv(peer, wire::Channel::kUser, tag, data, bytes); });
}

ncclResult_t Bootstrap::allgather(void* data, size_t bytes_per_rank) {
  return no_throw(rank_, "allgather", [&] { return ring_allgather(data, bytes_per_rank); });
}

ncclResult_t Bootstrap::broadcast(void* data, size_t bytes, int root) {
  return no_throw(rank_, "broadcast", [&] { return tree_broadcast(data, bytes, root); });
}

ncclResult_t Bootstrap::barrier() {
  return no_throw(rank_, "barrier", [&] { return dissemination_barrier(); });
}

// Ring: in step s each rank passes on the slot it received in step s-1. A rank talks to two
// neighbours only (2 connections rather than n-1) and moves (n-1) slots, the minimum; the n-1
// latency steps are negligible next to communicator setup for the rank counts of one NVLink domain.
ncclResult_t Bootstrap::ring_allgather(void* data, size_t bytes_per_rank) {
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
    ncclResult_t r = mesh_->send(next, kCollective, kAllgatherTag, base + send_slot * bytes_per_rank, bytes_per_rank);
    if (r == ncclSuccess) {
      r = mesh_->recv(prev, kCollective, kAllgatherTag, base + recv_slot * bytes_per_rank, bytes_per_rank);
    }
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

// Binomial tree rooted at `root`: ceil(log2 n) rounds instead of a ring's n-1, and no rank sends
// more than ceil(log2 n) copies. Bootstrap broadcasts are small (configuration, handles), so it is
// latency, not bandwidth, that counts.
ncclResult_t Bootstrap::tree_broadcast(void* data, size_t bytes, int root) {
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
      if (ncclResult_t r = mesh_->recv(parent, kCollective, kBroadcastTag, data, bytes); r != ncclSuccess) return r;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vrank + mask < n) {
      const int child = (vrank + mask + root) % n;
      if (ncclResult_t r = mesh_->send(child, kCollective, kBroadcastTag, data, bytes); r != ncclSuccess) return r;
    }
  }
  return ncclSuccess;
}

// Dissemination: in round k every rank signals rank + 2^k and waits for rank - 2^k; after
// ceil(log2 n) rounds each rank has heard, transitively, from every other. Within one barrier the
// distances differ, so a peer's messages can only pair with the same round of the next barrier,
// which per-peer FIFO order already keeps apart.
ncclResult_t Bootstrap::dissemination_barrier() {
  const int n = nranks_;
  for (int dist = 1; dist < n; dist <<= 1) {
    ncclResult_t r = mesh_->send((rank_ + dist) % n, kCollective, kBarrierTag, nullptr, 0);
    if (r == ncclSuccess) r = mesh_->recv((rank_ - dist + n) % n, kCollective, kBarrierTag, nullptr, 0);
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

}  // namespace purlin::runtime
