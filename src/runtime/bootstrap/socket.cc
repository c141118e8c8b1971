#include "runtime/bootstrap/socket.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "base/log.h"

namespace purlin::runtime::net {
namespace {

int ms_until(Deadline deadline) {
  // Rounded up so that a poll that returns 0 really means the deadline has passed.
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > INT_MAX ? INT_MAX : static_cast<int>(left);
}

bool retryable_connect_error(int err) {
  // Refused / unreachable: the listener may not be up yet, or a route is still settling.
  // ETIMEDOUT: SYNs went unanswered. All of them are worth another try until the deadline.
  return err == ECONNREFUSED || err == ETIMEDOUT || err == ECONNRESET || err == EHOSTUNREACH ||
         err == ENETUNREACH || err == EAGAIN || err == ECONNABORTED;
}

// Waits until `fd` is ready for `events`. Returns ncclSuccess when ready.
ncclResult_t wait_ready(int fd, short events, Deadline deadline, const AbortSignal* abort, const char* what) {
  pollfd fds[2] = {{fd, events, 0}, {abort != nullptr ? abort->fd() : -1, POLLIN, 0}};
  int rc = poll_until(fds, 2, deadline);
  if (abort != nullptr && abort->raised()) {
    PURLIN_INFO(kBootstrap, "bootstrap: %s interrupted by abort", what);
    return ncclRemoteError;
  }
  if (rc < 0) {
    PURLIN_WARN("bootstrap: poll during %s failed: %s", what, std::strerror(errno));
    return ncclSystemError;
  }
  if (rc == 0) {
    PURLIN_WARN("bootstrap: timed out during %s", what);
    return ncclRemoteError;
  }
  return ncclSuccess;
}

ncclResult_t io_failure(Io io, const char* what) {
  if (io == Io::kClosed) {
    PURLIN_WARN("bootstrap: connection closed by the peer during %s", what);
    return ncclRemoteError;
  }
  int err = errno;
  PURLIN_WARN("bootstrap: %s failed: %s", what, std::strerror(err));
  return (err == EPIPE || err == ECONNRESET || err == ETIMEDOUT) ? ncclRemoteError : ncclSystemError;
}

}  // namespace

Deadline deadline_after(int64_t seconds) { return Clock::now() + std::chrono::seconds(seconds); }

int poll_until(pollfd* fds, nfds_t count, Deadline deadline) {
  for (;;) {
    int rc = ::poll(fds, count, ms_until(deadline));
    if (rc >= 0 || errno != EINTR) return rc;
  }
}

bool Address::from_sockaddr(const sockaddr* sa, Address* out) {
  if (sa == nullptr) return false;
  Address a;
  if (sa->sa_family == AF_INET) {
    a.len_ = sizeof(sockaddr_in);
  } else if (sa->sa_family == AF_INET6) {
    a.len_ = sizeof(sockaddr_in6);
  } else {
    return false;
  }
  std::memcpy(&a.storage_, sa, a.len_);
  *out = a;
  return true;
}

bool Address::from_wire(const WireAddress& wire, Address* out) {
  Address a;
  if (wire.family == AF_INET) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = wire.port;
    std::memcpy(&in.sin_addr, wire.ip, sizeof(in.sin_addr));
    return from_sockaddr(reinterpret_cast<const sockaddr*>(&in), out);
  }
  if (wire.family == AF_INET6) {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = wire.port;
    in6.sin6_scope_id = wire.scope_id;
    std::memcpy(&in6.sin6_addr, wire.ip, sizeof(in6.sin6_addr));
    return from_sockaddr(reinterpret_cast<const sockaddr*>(&in6), out);
  }
  return false;
}

WireAddress Address::to_wire() const {
  WireAddress w{};
  w.family = static_cast<uint16_t>(family());
  if (family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage_);
    w.port = in->sin_port;
    std::memcpy(w.ip, &in->sin_addr, sizeof(in->sin_addr));
  } else if (family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage_);
    w.port = in6->sin6_port;
    w.scope_id = in6->sin6_scope_id;
    std::memcpy(w.ip, &in6->sin6_addr, sizeof(in6->sin6_addr));
  }
  return w;
}

void Address::set_port(uint16_t host_order_port) {
  if (family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(host_order_port);
  } else if (family() == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(host_order_port);
  }
}

bool Address::same_host(const Address& other) const {
  if (family() != other.family()) return false;
  const WireAddress a = to_wire();
  const WireAddress b = other.to_wire();
  return std::memcmp(a.ip, b.ip, sizeof(a.ip)) == 0;
}

std::string Address::str() const {
  char ip[INET6_ADDRSTRLEN] = "?";
  char scope[IF_NAMESIZE + 1] = "";
  char out[INET6_ADDRSTRLEN + IF_NAMESIZE + 16];
  if (family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&storage_);
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
    std::snprintf(out, sizeof(out), "%s:%u", ip, static_cast<unsigned>(ntohs(in->sin_port)));
    return out;
  }
  if (family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&storage_);
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
    if (in6->sin6_scope_id != 0 && if_indextoname(in6->sin6_scope_id, scope + 1) != nullptr) scope[0] = '%';
    std::snprintf(out, sizeof(out), "[%s%s]:%u", ip, scope, static_cast<unsigned>(ntohs(in6->sin6_port)));
    return out;
  }
  return "<no address>";
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  // Not retried on EINTR: on Linux the descriptor is released even then.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

ncclResult_t AbortSignal::open() {
  event_ = Socket(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!event_.valid()) {
    PURLIN_WARN("bootstrap: eventfd failed: %s", std::strerror(errno));
    return ncclSystemError;
  }
  return ncclSuccess;
}

void AbortSignal::raise() {
  raised_.store(true, std::memory_order_release);
  uint64_t one = 1;
  // A full counter (EAGAIN) still leaves the fd readable, which is all the sleepers need.
  while (event_.valid() && ::write(event_.fd(), &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

ncclResult_t listen_on(const Address& ip, Socket* out, Address* bound) {
  Socket s(::socket(ip.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.valid()) {
    PURLIN_WARN("bootstrap: socket() failed: %s", std::strerror(errno));
    return ncclSystemError;
  }
  Address any_port = ip;
  any_port.set_port(0);
  if (::bind(s.fd(), any_port.sa(), any_port.len()) != 0) {
    PURLIN_WARN("bootstrap: bind(%s) failed: %s", any_port.str().c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  if (::listen(s.fd(), SOMAXCONN) != 0) {
    PURLIN_WARN("bootstrap: listen(%s) failed: %s", any_port.str().c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
      !Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), bound)) {
    PURLIN_WARN("bootstrap: getsockname failed: %s", std::strerror(errno));
    return ncclSystemError;
  }
  *out = std::move(s);
  return ncclSuccess;
}

ncclResult_t connect_to(const Address& to, Deadline deadline, const AbortSignal* abort, Refused refused,
                        Socket* out) {
  const int abort_fd = abort != nullptr ? abort->fd() : -1;
  int backoff_ms = 1;
  for (;;) {
    if (abort != nullptr && abort->raised()) return ncclRemoteError;
    Socket s(::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!s.valid()) {
      PURLIN_WARN("bootstrap: socket() failed: %s", std::strerror(errno));
      return ncclSystemError;
    }
    int err = 0;
    // EINTR on a non-blocking connect leaves the attempt running, exactly like EINPROGRESS.
    if (::connect(s.fd(), to.sa(), to.len()) != 0) err = (errno == EINTR) ? EINPROGRESS : errno;
    if (err == EINPROGRESS) {
      pollfd fds[2] = {{s.fd(), POLLOUT, 0}, {abort_fd, POLLIN, 0}};
      int rc = poll_until(fds, 2, deadline);
      if (abort != nullptr && abort->raised()) return ncclRemoteError;
      if (rc < 0) {
        PURLIN_WARN("bootstrap: poll while connecting to %s failed: %s", to.str().c_str(), std::strerror(errno));
        return ncclSystemError;
      }
      socklen_t len = sizeof(err);
      if (rc == 0) {
        err = ETIMEDOUT;
      } else if (::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
    }
    if (err == 0) {
      int one = 1;
      // Bootstrap messages are small request/response exchanges; Nagle would only add latency.
      ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      *out = std::move(s);
      return ncclSuccess;
    }
    if (err == ECONNREFUSED && refused == Refused::kIsFinal) {
      PURLIN_WARN("bootstrap: connection to %s refused: nothing listens there any more", to.str().c_str());
      return ncclRemoteError;
    }
    if (!retryable_connect_error(err)) {
      PURLIN_WARN("bootstrap: connect to %s failed: %s", to.str().c_str(), std::strerror(err));
      return ncclSystemError;
    }
    if (Clock::now() >= deadline) {
      PURLIN_WARN("bootstrap: timed out connecting to %s (%s)", to.str().c_str(), std::strerror(err));
      return ncclRemoteError;
    }
    pollfd wake = {abort_fd, POLLIN, 0};
    poll_until(&wake, 1, std::min(deadline, Clock::now() + std::chrono::milliseconds(backoff_ms)));
    backoff_ms = std::min(backoff_ms * 2, 100);
  }
}

Accepted accept_one(int listen_fd, Socket* out, Address* peer) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      *out = Socket(fd);
      if (!Address::from_sockaddr(reinterpret_cast<sockaddr*>(&ss), peer)) *peer = Address();
      return Accepted::kOne;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Accepted::kNone;
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return Accepted::kExhausted;
    return Accepted::kFailed;
  }
}

Io read_some(int fd, void* buf, size_t len, size_t* n) {
  for (;;) {
    ssize_t r = ::recv(fd, buf, len, 0);
    if (r > 0) {
      *n = static_cast<size_t>(r);
      return Io::kProgress;
    }
    if (r == 0) return Io::kClosed;
    if (errno == EINTR) continue;
    return (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kWouldBlock : Io::kError;
  }
}

Io write_some(int fd, const void* buf, size_t len, size_t* n) {
  for (;;) {
    ssize_t r = ::send(fd, buf, len, MSG_NOSIGNAL);
    if (r >= 0) {
      *n = static_cast<size_t>(r);
      return Io::kProgress;
    }
    if (errno == EINTR) continue;
    return (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kWouldBlock : Io::kError;
  }
}

ncclResult_t send_all(int fd, const void* data, size_t len, Deadline deadline, const AbortSignal* abort,
                      const char* what) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < len) {
    size_t n = 0;
    Io io = write_some(fd, p + done, len - done, &n);
    if (io == Io::kProgress) {
      done += n;
    } else if (io == Io::kWouldBlock) {
      if (ncclResult_t r = wait_ready(fd, POLLOUT, deadline, abort, what); r != ncclSuccess) return r;
    } else {
      return io_failure(io, what);
    }
  }
  return ncclSuccess;
}

ncclResult_t recv_all(int fd, void* data, size_t len, Deadline deadline, const AbortSignal* abort,
                      const char* what) {
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < len) {
    size_t n = 0;
    Io io = read_some(fd, p + done, len - done, &n);
    if (io == Io::kProgress) {
      done += n;
    } else if (io == Io::kWouldBlock) {
      if (ncclResult_t r = wait_ready(fd, POLLIN, deadline, abort, what); r != ncclSuccess) return r;
    } else {
      return io_failure(io, what);
    }
  }
  return ncclSuccess;
}

}  // namespace purlin::runtime::net
