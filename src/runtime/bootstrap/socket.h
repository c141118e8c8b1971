// TCP plumbing shared by the root rendezvous thread and the ranks' mesh: addresses in the form
// they travel in (unique id, hellos), RAII sockets, and I/O with deadlines built on poll().
//
// Every socket is non-blocking: a thread never sleeps inside send()/recv(), only inside poll(),
// where it can also watch an abort signal and a deadline. Sends use MSG_NOSIGNAL so a vanished
// peer yields EPIPE instead of killing the process with SIGPIPE.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin::runtime::net {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

Deadline deadline_after(int64_t seconds);

// poll() that retries on EINTR and stops at `deadline`: >0 ready, 0 deadline passed, <0 error.
int poll_until(pollfd* fds, nfds_t count, Deadline deadline);

// An IPv4 or IPv6 endpoint in a fixed layout, so it can be copied byte for byte into the unique id
// and into hellos. Ranks of one group run the same build on the same architecture, so host byte
// order is fine for the non-address fields.
struct WireAddress {
  uint16_t family;    // AF_INET or AF_INET6
  uint16_t port;      // network byte order, as in sockaddr
  uint32_t scope_id;  // IPv6 link-local scope, else 0
  uint8_t ip[16];     // IPv4 uses the first 4 bytes
};
static_assert(sizeof(WireAddress) == 24);

class Address {
 public:
  Address() = default;
  // False for anything but AF_INET / AF_INET6.
  static bool from_sockaddr(const sockaddr* sa, Address* out);
  static bool from_wire(const WireAddress& wire, Address* out);

  WireAddress to_wire() const;
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t len() const { return len_; }
  int family() const { return storage_.ss_family; }
  void set_port(uint16_t host_order_port);
  // Same family and IP, any port: connections from one host share their limits.
  bool same_host(const Address& other) const;
  // "10.0.0.1:4242" or "[fe80::1%eth0]:4242", for logs.
  std::string str() const;

 private:
  sockaddr_storage storage_{};
  socklen_t len_ = 0;
};

// Owns one file descriptor; move-only.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

// Lets another thread interrupt a blocked poll (Bootstrap::abort): a flag for the decision and an
// eventfd that every poll watches so the sleeper wakes at once.
class AbortSignal {
 public:
  AbortSignal() = default;
  AbortSignal(const AbortSignal&) = delete;
  AbortSignal& operator=(const AbortSignal&) = delete;
  ncclResult_t open();
  void raise();
  bool raised() const { return raised_.load(std::memory_order_acquire); }
  int fd() const { return event_.fd(); }

 private:
  std::atomic<bool> raised_{false};
  Socket event_;
};

// A listening socket on `ip` with a kernel-chosen port; `bound` receives the full address.
ncclResult_t listen_on(const Address& ip, Socket* out, Address* bound);

// What a refused connection attempt means. kRetry: the target may not be listening yet (or again
// soon), so retry with a short backoff until the deadline. kIsFinal: its listener is known to have
// existed, so a refusal means it is gone; fail at once with ncclRemoteError. Unreachable routes and
// lost SYNs are retried until the deadline either way.
enum class Refused { kRetry, kIsFinal };

// `abort` may be null.
ncclResult_t connect_to(const Address& to, Deadline deadline, const AbortSignal* abort, Refused refused,
                        Socket* out);

enum class Accepted {
  kOne,        // `out` holds a new connection
  kNone,       // nothing is pending
  kExhausted,  // out of descriptors or kernel memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the
               // connection stays queued and the listener stays readable, so retrying at once spins
  kFailed,     // any other error; errno is set
};
// One non-blocking accept. Logs nothing: callers rate-limit what they say about failures.
Accepted accept_one(int listen_fd, Socket* out, Address* peer);

enum class Io { kProgress, kWouldBlock, kClosed, kError };
// Single non-blocking transfer of at most `len` (> 0) bytes; `*n` receives the count moved.
// kError leaves errno set.
Io read_some(int fd, void* buf, size_t len, size_t* n);
Io write_some(int fd, const void* buf, size_t len, size_t* n);

// Moves exactly `len` bytes or fails: ncclRemoteError on timeout, abort, reset or EOF;
// ncclSystemError on local failures. `what` names the transfer in the WARN.
ncclResult_t send_all(int fd, const void* data, size_t len, Deadline deadline, const AbortSignal* abort,
                      const char* what);
ncclResult_t recv_all(int fd, void* data, size_t len, Deadline deadline, const AbortSignal* abort,
                      const char* what);

}  // namespace purlin::runtime::net
