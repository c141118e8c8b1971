// Which local address the bootstrap sockets bind to.
//
// PURLIN_SOCKET_IFNAME (or NCCL_SOCKET_IFNAME, which users of a drop-in library already set) is a
// comma-separated list of interface-name prefixes; a leading '^' excludes instead of selects, and
// a leading '=' (after any '^') asks for exact names. PURLIN_SOCKET_FAMILY / NCCL_SOCKET_FAMILY
// (AF_INET or AF_INET6) restricts the address family. Without a list: the first up, non-loopback
// IPv4 interface, else loopback.
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

#include "runtime/bootstrap/socket.h"

namespace purlin::runtime::net {

class InterfaceFilter {
 public:
  // An empty spec matches every interface.
  explicit InterfaceFilter(const std::string& spec);
  bool matches(const std::string& ifname) const;
  bool empty() const { return names_.empty(); }

 private:
  std::vector<std::string> names_;
  bool exclude_ = false;
  bool exact_ = false;
};

struct LocalAddress {
  Address addr;  // port 0
  std::string ifname;
};

// Picks the address from the environment settings above; ncclSystemError (with a WARN naming the
// setting) when nothing qualifies.
ncclResult_t choose_local_address(LocalAddress* out);

}  // namespace purlin::runtime::net
