// Reading and writing whole frames (wire.h) on the bootstrap's non-blocking sockets.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/bootstrap/socket.h"
#include "runtime/bootstrap/wire.h"

namespace purlin::runtime::wire {

// Reads one frame at a time, as its bytes arrive: the header, checked against the Expect of the
// current protocol step before any byte of the body is read, then the body. The body buffer
// grows with the bytes received, never ahead of them by more than a bounded step, so a header
// that claims much and sends little costs nothing. It never reads past the end of the frame.
class FrameReader {
 public:
  enum class Status {
    kMore,    // the frame is incomplete; read again when the socket is readable
    kFrame,   // header() and body() hold a complete frame
    kBad,     // the header breaks the Expect; error() says how; the connection is unusable
    kClosed,  // EOF
    kError,   // a socket error; errno is set
  };

  // Starts the next frame, which must satisfy `e`.
  void expect(const Expect& e);
  // Reads what the socket has, up to the end of the frame.
  Status read_from(int fd);
  // The same from memory (tests, fuzzing): consumes up to `len` bytes, `*used` of them.
  Status feed(const uint8_t* data, size_t len, size_t* used);

  // Bytes of the current frame received so far: 0 when the peer has not started it.
  uint64_t received() const { return header_got_ + body_got_; }
  const FrameHeader& header() const { return header_; }
  std::vector<uint8_t>& body() { return body_; }
  const std::string& error() const { return error_; }

  // A fixed-size body (its Expect came from expect_exactly(..., sizeof(T))).
  template <typename T>
  T body_as() const {
    T out;
    std::memcpy(&out, body_.data(), sizeof(T));
    return out;
  }

 private:
  template <typename Read>
  Status pump(Read&& read);

  Expect expect_{};
  FrameHeader header_{};
  size_t header_got_ = 0;
  uint64_t body_got_ = 0;
  std::vector<uint8_t> body_;
  std::string error_;
};

// Header and body, written as one message: for the small frames of the handshakes.
ncclResult_t send_frame(int fd, const FrameHeader& header, const void* body, net::Deadline deadline,
                        const net::AbortSignal* abort, const char* what);

// Writes a small frame on a fresh socket without waiting: true only if all of it went out
// (a few dozen bytes always fit an empty socket buffer). For single-threaded servers.
bool send_frame_now(int fd, const FrameHeader& header, const void* body);

// Blocks until a frame satisfying `e` has arrived in `reader`. A bad frame logs what was wrong
// and who sent it (`peer`) and is ncclRemoteError, like EOF and the deadline. With `closed_early`,
// EOF before the first byte of the frame is not logged but reported there: a server that is
// full may close a connection it has not yet answered, and the caller may try again.
ncclResult_t recv_frame(int fd, FrameReader& reader, const Expect& e, net::Deadline deadline,
                        const net::AbortSignal* abort, const std::string& peer, const char* what,
                        bool* closed_early = nullptr);

}  // namespace purlin::runtime::wire
