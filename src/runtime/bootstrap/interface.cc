#include "runtime/bootstrap/interface.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "base/env.h"
#include "base/log.h"

namespace purlin::runtime::net {
namespace {

int family_setting() {
  const char* var = "PURLIN_SOCKET_FAMILY";
  std::string f = env::get_string(var);
  if (f.empty()) {
    var = "NCCL_SOCKET_FAMILY";
    f = env::get_string(var);
  }
  if (f.empty()) return AF_UNSPEC;
  if (f == "AF_INET" || f == "4") return AF_INET;
  if (f == "AF_INET6" || f == "6") return AF_INET6;
  PURLIN_WARN("%s=%s is neither AF_INET nor AF_INET6; ignoring it", var, f.c_str());
  return AF_UNSPEC;
}

// Lower is better. Loopback loses to everything so that an exclusion list such as "^docker"
// does not land on "lo" just because getifaddrs lists it first; link-local IPv6 needs a scope
// and is the least portable choice.
int preference(const sockaddr* sa, bool loopback) {
  int p = 0;
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    p = IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr) ? 2 : 1;
  }
  return loopback ? p + 10 : p;
}

Address loopback_address(int family) {
  Address a;
  if (family == AF_INET6) {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_addr = in6addr_loopback;
    Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&in6), &a);
  } else {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Address::from_sockaddr(reinterpret_cast<const sockaddr*>(&in), &a);
  }
  return a;
}

}  // namespace

InterfaceFilter::InterfaceFilter(const std::string& spec) {
  size_t pos = 0;
  if (pos < spec.size() && spec[pos] == '^') {
    exclude_ = true;
    ++pos;
  }
  if (pos < spec.size() && spec[pos] == '=') {
    exact_ = true;
    ++pos;
  }
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    if (comma > pos) names_.push_back(spec.substr(pos, comma - pos));
    pos = comma + 1;
  }
}

bool InterfaceFilter::matches(const std::string& ifname) const {
  if (names_.empty()) return true;
  bool hit = false;
  for (const std::string& n : names_) {
    hit = hit || (exact_ ? ifname == n : ifname.compare(0, n.size(), n) == 0);
  }
  return exclude_ ? !hit : hit;
}

ncclResult_t choose_local_address(LocalAddress* out) {
  const char* spec_var = "PURLIN_SOCKET_IFNAME";
  std::string spec = env::get_string(spec_var);
  if (spec.empty()) {
    spec_var = "NCCL_SOCKET_IFNAME";
    spec = env::get_string(spec_var);
  }
  const bool user_choice = !spec.empty();
  // Without a user choice, container and VM bridges are skipped: they are host-local and would
  // make other hosts of the NVLink domain unreachable.
  const InterfaceFilter filter(user_choice ? spec : "^docker,virbr");
  const int family = family_setting();

  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) {
    PURLIN_WARN("bootstrap: getifaddrs failed: %s", std::strerror(errno));
    return ncclSystemError;
  }
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, ::freeifaddrs);

  int best_pref = -1;
  for (const ifaddrs* ifa = list.get(); ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    const int fam = ifa->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (family != AF_UNSPEC && fam != family) continue;
    const bool loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    if (!filter.matches(ifa->ifa_name)) continue;
    // The default is deliberately narrow: a real IPv4 interface, else loopback (below).
    if (!user_choice && (loopback || (family == AF_UNSPEC && fam != AF_INET))) continue;
    const int pref = preference(ifa->ifa_addr, loopback);
    if (best_pref >= 0 && pref >= best_pref) continue;
    if (!Address::from_sockaddr(ifa->ifa_addr, &out->addr)) continue;
    out->ifname = ifa->ifa_name;
    best_pref = pref;
  }
  if (best_pref >= 0) return ncclSuccess;
  if (user_choice) {
    PURLIN_WARN("bootstrap: no up interface matches %s=%s%s", spec_var, spec.c_str(),
                family == AF_UNSPEC ? "" : " with the requested address family");
    return ncclSystemError;
  }
  out->addr = loopback_address(family);
  out->ifname = "lo";
  return ncclSuccess;
}

}  // namespace purlin::runtime::net
