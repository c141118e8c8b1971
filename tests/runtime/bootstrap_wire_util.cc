#include "bootstrap_wire_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/bootstrap/bootstrap.h"
#include "runtime/bootstrap/interface.h"

namespace purlin::runtime::testing {

bool new_group(ncclUniqueId* id, UniqueIdContents* contents) {
  return create_unique_id(id) == ncclSuccess && decode_unique_id(*id, contents);
}

net::Socket dial(const net::Address& to) {
  net::Socket s;
  if (net::connect_to(to, net::deadline_after(5), nullptr, net::Refused::kRetry, &s) != ncclSuccess) return {};
  return s;
}

bool send_bytes(int fd, const void* data, size_t len) {
  return net::send_all(fd, data, len, net::deadline_after(5), nullptr, "a test's bytes") == ncclSuccess;
}

bool send_frame(int fd, uint32_t magic, wire::FrameType type, const void* body, size_t len) {
  return wire::send_frame(fd, wire::make_header(magic, type, len), body, net::deadline_after(5), nullptr,
                          "a test's frame") == ncclSuccess;
}

Drained drain(int fd, std::chrono::milliseconds limit) {
  Drained out;
  uint8_t buf[4096];
  const net::Deadline deadline = net::Clock::now() + limit;
  for (;;) {
    pollfd p = {fd, POLLIN, 0};
    if (net::poll_until(&p, 1, deadline) <= 0) return out;
    size_t n = 0;
    const net::Io io = net::read_some(fd, buf, sizeof(buf), &n);
    if (io == net::Io::kProgress) out.bytes.insert(out.bytes.end(), buf, buf + n);
    if (io == net::Io::kClosed || io == net::Io::kError) {
      out.closed = true;
      return out;
    }
  }
}

net::Socket accept_first_frame(int listen_fd, const wire::Expect& e, wire::FrameReader* reader) {
  pollfd p = {listen_fd, POLLIN, 0};
  net::Socket s;
  net::Address from;
  if (net::poll_until(&p, 1, net::deadline_after(5)) != 1 ||
      net::accept_one(listen_fd, &s, &from) != net::Accepted::kOne ||
      wire::recv_frame(s.fd(), *reader, e, net::deadline_after(5), nullptr, "the rank", "a fake server's read") !=
          ncclSuccess) {
    return {};
  }
  return s;
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }

ScopedEnv::~ScopedEnv() { ::unsetenv(name_); }

bool root_handshake(int fd, const wire::RootHello& hello, const auth::Key& key, bool* root_proved) {
  *root_proved = false;
  if (!send_frame(fd, wire::kRootMagic, wire::FrameType::kRootHello, &hello, sizeof(hello))) return false;
  wire::FrameReader reader;
  const wire::Expect challenge =
      wire::expect_exactly(wire::kRootMagic, wire::FrameType::kChallenge, sizeof(wire::Challenge));
  if (wire::recv_frame(fd, reader, challenge, net::deadline_after(5), nullptr, "the root", "a test handshake") !=
      ncclSuccess) {
    return false;
  }
  const auto c = reader.body_as<wire::Challenge>();
  *root_proved = auth::verify(key, auth::Role::kRoot, &hello, sizeof(hello), c.nonce, c.mac);
  const wire::Proof proof{auth::prove(key, auth::Role::kRank, &hello, sizeof(hello), c.nonce)};
  return send_frame(fd, wire::kRootMagic, wire::FrameType::kProof, &proof, sizeof(proof));
}

bool peer_handshake(int fd, const wire::PeerHello& hello, const wire::Nonce& accept_nonce, const auth::Key& key) {
  const wire::Proof proof{auth::prove(key, auth::Role::kConnector, &hello, sizeof(hello), accept_nonce)};
  return send_frame(fd, wire::kPeerMagic, wire::FrameType::kPeerHello, &hello, sizeof(hello)) &&
         send_frame(fd, wire::kPeerMagic, wire::FrameType::kProof, &proof, sizeof(proof));
}

bool peer_accepted(int fd, const wire::PeerHello& hello, const wire::Nonce& accept_nonce, const auth::Key& key) {
  wire::FrameReader reader;
  if (wire::recv_frame(fd, reader, wire::expect_exactly(wire::kPeerMagic, wire::FrameType::kProof, sizeof(wire::Proof)),
                       net::deadline_after(5), nullptr, "the peer", "a test handshake") != ncclSuccess) {
    return false;
  }
  return auth::verify(key, auth::Role::kAcceptor, &hello, sizeof(hello), accept_nonce,
                      reader.body_as<wire::Proof>().mac);
}

std::vector<std::unique_ptr<Mesh>> make_meshes(int n, const auth::Key& key, std::vector<net::Address>* addrs,
                                               int timeout_s, std::vector<wire::Nonce>* accept_nonces) {
  net::LocalAddress lo;
  std::vector<std::unique_ptr<Mesh>> meshes;
  if (net::choose_local_address(&lo) != ncclSuccess) return meshes;
  std::vector<net::Socket> listeners(n);
  addrs->assign(n, net::Address());
  for (int r = 0; r < n; ++r) {
    if (net::listen_on(lo.addr, &listeners[r], &(*addrs)[r]) != ncclSuccess) return meshes;
  }
  std::vector<Mesh::PeerAddress> peers(n);
  for (int r = 0; r < n; ++r) {
    peers[r].addr = (*addrs)[r];
    if (auth::random_bytes(&peers[r].accept_nonce, sizeof(peers[r].accept_nonce)) != ncclSuccess) return meshes;
  }
  if (accept_nonces != nullptr) {
    accept_nonces->clear();
    for (const Mesh::PeerAddress& p : peers) accept_nonces->push_back(p.accept_nonce);
  }
  meshes.resize(n);
  for (int r = 0; r < n; ++r) {
    if (Mesh::create(r, peers, key, std::move(listeners[r]), timeout_s, &meshes[r]) != ncclSuccess) return {};
  }
  return meshes;
}

auth::Key test_key(uint8_t seed) {
  auth::Key k{};
  for (size_t i = 0; i < sizeof(k.bytes); ++i) k.bytes[i] = static_cast<uint8_t>(seed + 17 * i);
  k.len = sizeof(k.bytes);
  return k;
}

StrangerFlood::StrangerFlood(const net::Address& to, int count, int head_start) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return;
  pid_ = ::fork();
  if (pid_ < 0) return;
  if (pid_ == 0) {
    // Raw system calls only: this child of a threaded process must not allocate or log.
    ::close(pipe_fds[0]);
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
    int opened = 0;
    for (int i = 0; i < count; ++i) {
      const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK, 0);
      if (fd < 0) break;
      if (::connect(fd, to.sa(), to.len()) != 0 && errno != EINPROGRESS) continue;
      pollfd p = {fd, POLLOUT, 0};
      if (::poll(&p, 1, 5000) == 1) ++opened;
      if (i + 1 == head_start) (void)!::write(pipe_fds[1], "h", 1);
    }
    (void)!::write(pipe_fds[1], &opened, sizeof(opened));
    for (;;) ::pause();  // hold the connections until killed
  }
  ::close(pipe_fds[1]);
  report_fd_ = pipe_fds[0];
  char h = 0;
  pollfd p = {report_fd_, POLLIN, 0};
  if (::poll(&p, 1, 10000) == 1) (void)!::read(report_fd_, &h, 1);
}

int StrangerFlood::opened(std::chrono::seconds limit) {
  int n = -1;
  pollfd p = {report_fd_, POLLIN, 0};
  if (report_fd_ >= 0 && ::poll(&p, 1, static_cast<int>(limit.count() * 1000)) == 1 &&
      ::read(report_fd_, &n, sizeof(n)) != sizeof(n)) {
    n = -1;
  }
  return n;
}

StrangerFlood::~StrangerFlood() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (report_fd_ >= 0) ::close(report_fd_);
}

}  // namespace purlin::runtime::testing
