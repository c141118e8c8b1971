#include "runtime/bootstrap/frame.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"

namespace purlin::runtime::wire {
namespace {

// How far the body buffer may run ahead of the bytes received: large enough that a big message
// needs few reallocations, small enough that a lying header gains nothing.
constexpr uint64_t kBodyStep = uint64_t{1} << 20;

}  // namespace

void FrameReader::expect(const Expect& e) {
  expect_ = e;
  header_ = {};
  header_got_ = 0;
  body_got_ = 0;
  body_.clear();
  error_.clear();
}

template <typename Read>
FrameReader::Status FrameReader::pump(Read&& read) {
  for (;;) {
    uint8_t* dst;
    size_t want;
    if (header_got_ < sizeof(header_)) {
      dst = reinterpret_cast<uint8_t*>(&header_) + header_got_;
      want = sizeof(header_) - header_got_;
    } else if (body_got_ < header_.bytes) {
      if (body_.size() == body_got_) {
        // Grow by what has arrived (doubling) or one step, whichever is more, capped by the claim.
        const uint64_t grow = std::max<uint64_t>(body_got_, kBodyStep);
        body_.resize(static_cast<size_t>(std::min<uint64_t>(header_.bytes, body_got_ + grow)));
      }
      dst = body_.data() + body_got_;
      want = body_.size() - static_cast<size_t>(body_got_);
    } else {
      return Status::kFrame;
    }
    size_t n = 0;
    const net::Io io = read(dst, want, &n);
    if (io == net::Io::kWouldBlock) return Status::kMore;
    if (io == net::Io::kClosed) return Status::kClosed;
    if (io == net::Io::kError) return Status::kError;
    if (header_got_ < sizeof(header_)) {
      header_got_ += n;
      if (header_got_ == sizeof(header_)) {
        error_ = check_header(header_, expect_);
        if (!error_.empty()) return Status::kBad;
      }
    } else {
      body_got_ += n;
    }
  }
}

FrameReader::Status FrameReader::read_from(int fd) {
  return pump([fd](void* buf, size_t len, size_t* n) { return net::read_some(fd, buf, len, n); });
}

FrameReader::Status FrameReader::feed(const uint8_t* data, size_t len, size_t* used) {
  *used = 0;
  return pump([&](void* buf, size_t want, size_t* n) {
    if (*used == len) return net::Io::kWouldBlock;
    *n = std::min(want, len - *used);
    std::memcpy(buf, data + *used, *n);
    *used += *n;
    return net::Io::kProgress;
  });
}

ncclResult_t send_frame(int fd, const FrameHeader& header, const void* body, net::Deadline deadline,
                        const net::AbortSignal* abort, const char* what) {
  std::vector<uint8_t> msg(sizeof(header) + header.bytes);
  std::memcpy(msg.data(), &header, sizeof(header));
  if (header.bytes > 0) std::memcpy(msg.data() + sizeof(header), body, header.bytes);
  return net::send_all(fd, msg.data(), msg.size(), deadline, abort, what);
}

bool send_frame_now(int fd, const FrameHeader& header, const void* body) {
  uint8_t msg[sizeof(header) + 128];
  if (header.bytes > sizeof(msg) - sizeof(header)) return false;
  std::memcpy(msg, &header, sizeof(header));
  if (header.bytes > 0) std::memcpy(msg + sizeof(header), body, header.bytes);
  const size_t len = sizeof(header) + header.bytes;
  size_t n = 0;
  return net::write_some(fd, msg, len, &n) == net::Io::kProgress && n == len;
}

ncclResult_t recv_frame(int fd, FrameReader& reader, const Expect& e, net::Deadline deadline,
                        const net::AbortSignal* abort, const std::string& peer, const char* what,
                        bool* closed_early) {
  reader.expect(e);
  if (closed_early != nullptr) *closed_early = false;
  for (;;) {
    switch (reader.read_from(fd)) {
      case FrameReader::Status::kFrame:
        return ncclSuccess;
      case FrameReader::Status::kBad:
        PURLIN_WARN("bootstrap: %s sent %s during %s; closing the connection", peer.c_str(),
                    reader.error().c_str(), what);
        return ncclRemoteError;
      case FrameReader::Status::kClosed:
        if (closed_early != nullptr && reader.received() == 0) {
          *closed_early = true;
          return ncclRemoteError;
        }
        PURLIN_WARN("bootstrap: %s closed the connection during %s", peer.c_str(), what);
        return ncclRemoteError;
      case FrameReader::Status::kError:
        PURLIN_WARN("bootstrap: reading from %s during %s failed: %s", peer.c_str(), what, std::strerror(errno));
        return ncclRemoteError;
      case FrameReader::Status::kMore:
        break;
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {abort != nullptr ? abort->fd() : -1, POLLIN, 0}};
    const int rc = net::poll_until(fds, 2, deadline);
    if (abort != nullptr && abort->raised()) return ncclRemoteError;
    if (rc < 0) {
      PURLIN_WARN("bootstrap: poll during %s failed: %s", what, std::strerror(errno));
      return ncclSystemError;
    }
    if (rc == 0) {
      PURLIN_WARN("bootstrap: timed out waiting for %s during %s", peer.c_str(), what);
      return ncclRemoteError;
    }
  }
}

}  // namespace purlin::runtime::wire
