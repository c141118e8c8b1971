#include "bootstrap_test_util.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace purlin::runtime::testing {
namespace {

std::string fail(const char* what, ncclResult_t r) {
  return std::string(what) + " returned " + std::to_string(static_cast<int>(r));
}

// Payload byte i of a message, distinct per (from, to, tag) so misrouting is caught.
uint8_t pattern(int from, int to, int tag, size_t i) {
  return static_cast<uint8_t>(from * 131 + to * 31 + tag * 7 + i * 13 + (i >> 8));
}

std::vector<uint8_t> message(int from, int to, int tag, size_t bytes) {
  std::vector<uint8_t> m(bytes);
  for (size_t i = 0; i < bytes; ++i) m[i] = pattern(from, to, tag, i);
  return m;
}

std::string check_message(const std::vector<uint8_t>& m, int from, int to, int tag) {
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] != pattern(from, to, tag, i)) {
      return "message " + std::to_string(from) + "->" + std::to_string(to) + " tag " + std::to_string(tag) +
             " differs at byte " + std::to_string(i);
    }
  }
  return "";
}

std::string check_allgather(Bootstrap& b, size_t bytes_per_rank) {
  const int n = b.size();
  std::vector<uint8_t> buf(bytes_per_rank * n, 0xEE);
  std::vector<uint8_t> mine = message(b.rank(), -1, 0, bytes_per_rank);
  if (bytes_per_rank > 0) std::memcpy(buf.data() + b.rank() * bytes_per_rank, mine.data(), bytes_per_rank);
  if (ncclResult_t r = b.allgather(buf.data(), bytes_per_rank); r != ncclSuccess) return fail("allgather", r);
  for (int k = 0; k < n; ++k) {
    std::vector<uint8_t> slot(buf.begin() + k * bytes_per_rank, buf.begin() + (k + 1) * bytes_per_rank);
    if (std::string e = check_message(slot, k, -1, 0); !e.empty()) return "allgather: " + e;
  }
  return "";
}

std::string check_point_to_point(Bootstrap& b) {
  const int me = b.rank();
  const int n = b.size();
  // Two tags per peer, sent 7 then 3 and received 3 then 7, from peers in reverse order: every
  // rank has to buffer messages it is not waiting for yet.
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    auto a = message(me, p, 7, 16);
    auto c = message(me, p, 3, 24 + p);
    if (ncclResult_t r = b.send(p, 7, a.data(), a.size()); r != ncclSuccess) return fail("send tag 7", r);
    if (ncclResult_t r = b.send(p, 3, c.data(), c.size()); r != ncclSuccess) return fail("send tag 3", r);
    if (ncclResult_t r = b.send(p, 9, nullptr, 0); r != ncclSuccess) return fail("send of 0 bytes", r);
  }
  for (int p = n - 1; p >= 0; --p) {
    if (p == me) continue;
    std::vector<uint8_t> c(24 + me), a(16);
    if (ncclResult_t r = b.recv(p, 3, c.data(), c.size()); r != ncclSuccess) return fail("recv tag 3", r);
    if (ncclResult_t r = b.recv(p, 9, nullptr, 0); r != ncclSuccess) return fail("recv of 0 bytes", r);
    if (ncclResult_t r = b.recv(p, 7, a.data(), a.size()); r != ncclSuccess) return fail("recv tag 7", r);
    if (std::string e = check_message(c, p, me, 3); !e.empty()) return e;
    if (std::string e = check_message(a, p, me, 7); !e.empty()) return e;
  }
  // Both neighbours at once, larger than any socket buffer, before receiving anything: this
  // deadlocks unless a blocked send keeps draining incoming data.
  constexpr size_t kBig = 4u << 20;
  const int next = (me + 1) % n;
  const int prev = (me + n - 1) % n;
  if (n > 1) {
    auto to_next = message(me, next, 100, kBig);
    auto to_prev = message(me, prev, 101, kBig);
    if (ncclResult_t r = b.send(next, 100, to_next.data(), kBig); r != ncclSuccess) return fail("big send", r);
    if (ncclResult_t r = b.send(prev, 101, to_prev.data(), kBig); r != ncclSuccess) return fail("big send", r);
    std::vector<uint8_t> from_prev(kBig), from_next(kBig);
    if (ncclResult_t r = b.recv(prev, 100, from_prev.data(), kBig); r != ncclSuccess) return fail("big recv", r);
    if (ncclResult_t r = b.recv(next, 101, from_next.data(), kBig); r != ncclSuccess) return fail("big recv", r);
    if (std::string e = check_message(from_prev, prev, me, 100); !e.empty()) return e;
    if (std::string e = check_message(from_next, next, me, 101); !e.empty()) return e;
  }
  return "";
}

}  // namespace

void use_loopback_env() {
  ::setenv("PURLIN_SOCKET_IFNAME", "lo", 1);
  ::unsetenv("NCCL_SOCKET_IFNAME");
  ::unsetenv("PURLIN_SOCKET_FAMILY");
  ::unsetenv("NCCL_SOCKET_FAMILY");
  ::setenv("PURLIN_BOOTSTRAP_TIMEOUT", "20", 1);
}

std::string run_ranks_in_threads(int nranks, const RankBody& body) {
  std::vector<std::string> errors(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) threads.emplace_back([&, r] { errors[r] = body(r); });
  for (std::thread& t : threads) t.join();
  std::string all;
  for (int r = 0; r < nranks; ++r) {
    if (!errors[r].empty()) all += "rank " + std::to_string(r) + ": " + errors[r] + "\n";
  }
  return all;
}

std::string run_ranks_in_processes(int nranks, const RankBody& body, std::chrono::seconds limit) {
  std::vector<pid_t> pids(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) return "fork failed: " + std::string(std::strerror(errno));
    if (pid == 0) {
      std::string e = body(r);
      if (!e.empty()) std::fprintf(stderr, "child rank %d: %s\n", r, e.c_str());
      std::fflush(stderr);
      ::_exit(e.empty() ? 0 : 1);  // no atexit handlers or gtest teardown in the child
    }
    pids[r] = pid;
  }
  std::string all;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int running = nranks;
  while (running > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] < 0) continue;
      int status = 0;
      if (::waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      pids[r] = -1;
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) all += "rank " + std::to_string(r) + " failed\n";
    }
    if (running > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < nranks; ++r) {
        if (pids[r] < 0) continue;
        ::kill(pids[r], SIGKILL);
        ::waitpid(pids[r], nullptr, 0);
        all += "rank " + std::to_string(r) + " killed after the time limit\n";
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return all;
}

std::string join_and_exercise(const ncclUniqueId& id, int rank, int nranks) {
  std::unique_ptr<Bootstrap> b;
  if (ncclResult_t r = Bootstrap::create(id, rank, nranks, &b); r != ncclSuccess) return fail("create", r);
  if (b->rank() != rank || b->size() != nranks) return "rank() / size() disagree with create";
  return exercise(*b);
}

std::string exercise(Bootstrap& b) {
  if (std::string e = check_allgather(b, 8); !e.empty()) return e;
  if (std::string e = check_allgather(b, 1 << 20); !e.empty()) return e;
  if (std::string e = check_allgather(b, 0); !e.empty()) return e;
  for (int root = 0; root < b.size(); ++root) {
    std::vector<uint8_t> buf = root == b.rank() ? message(root, -2, 0, 4099) : std::vector<uint8_t>(4099, 0);
    if (ncclResult_t r = b.broadcast(buf.data(), buf.size(), root); r != ncclSuccess) return fail("broadcast", r);
    if (std::string e = check_message(buf, root, -2, 0); !e.empty()) return "broadcast: " + e;
  }
  for (int i = 0; i < 3; ++i) {
    if (ncclResult_t r = b.barrier(); r != ncclSuccess) return fail("barrier", r);
  }
  if (std::string e = check_point_to_point(b); !e.empty()) return e;
  if (ncclResult_t r = b.barrier(); r != ncclSuccess) return fail("final barrier", r);
  return "";
}

}  // namespace purlin::runtime::testing
