#include "recorder.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "fake_nccl.h"

namespace fake_nccl {
namespace {

constexpr uint64_t kCommMagic = 0xfa4e'cc01'0000'0000ull;

struct State {
  std::mutex mu;
  std::deque<std::string> log;  // deque: fake_nccl_call's pointers survive appends
  std::map<std::string, int> results;
  std::set<ncclComm_t> comms;
  std::set<void*> allocations;
  int comm_serial = 0;
  uintptr_t token = 0x7e57'0000;
};

State& state() {
  static State* s = new State;  // never destroyed: calls may arrive during exit
  return *s;
}

ncclResult_t configured_result(const std::string& name) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (const std::string& key : {name, std::string("*")}) {
      auto it = s.results.find(key);
      if (it != s.results.end()) return static_cast<ncclResult_t>(it->second);
    }
  }
  const char* env = std::getenv("FAKE_NCCL_RESULT");
  return env != nullptr && *env != '\0' ? static_cast<ncclResult_t>(std::atoi(env)) : ncclSuccess;
}

std::string encode(const char* s) {
  if (s == nullptr) return "null";
  std::string out;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(s); *p != 0; ++p) {
    if (*p <= ' ' || *p >= 0x7f || *p == '%' || *p == '=') {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", *p);
      out += hex;
    } else {
      out += static_cast<char>(*p);
    }
  }
  return out;
}

// A field of a versioned struct exists when it lies within the struct's own size: one from an
// older header is shorter.
template <class T>
bool within(const T* c, const void* field, size_t size) {
  return static_cast<size_t>(static_cast<const char*>(field) - reinterpret_cast<const char*>(c)) + size <= c->size;
}

}  // namespace

Call::Call(const char* name) : line_(name), result_(configured_result(name)) {}

Call& Call::num(const char* key, long long value) {
  line_ += std::string(" ") + key + "=" + std::to_string(value);
  return *this;
}

Call& Call::ptr(const char* key, const void* value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(value));
  line_ += std::string(" ") + key + "=" + buf;
  return *this;
}

Call& Call::str(const char* key, const char* value) {
  line_ += std::string(" ") + key + "=" + encode(value);
  return *this;
}

Call& Call::id(const char* key, const ncclUniqueId& value) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : value.internal) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, h);
  line_ += std::string(" ") + key + "=" + buf;
  return *this;
}

Call& Call::comm(const char* key, ncclComm_t value) {
  ptr(key, value);
  bool known = known_comm(value);
  line_ += std::string(" ") + key + "_known=" + (known ? "1" : "0");
  if (!known) result_ = ncclInvalidArgument;
  return *this;
}

template <class T>
bool Call::versioned(const char* key, const T* c) {
  ptr(key, c);
  if (c == nullptr) return false;
  std::string k = std::string(key) + ".";
  num((k + "size").c_str(), static_cast<long long>(c->size));
  num((k + "magic").c_str(), c->magic);
  num((k + "version").c_str(), c->version);
  return true;
}

Call& Call::config(const char* key, const ncclConfig_t* c) {
  if (!versioned(key, c)) return *this;
  auto present = [c](const void* field, size_t size) { return within(c, field, size); };
  std::string k = std::string(key) + ".";
  static constexpr std::pair<const char*, int ncclConfig_t::*> kInts[] = {
      {"blocking", &ncclConfig_t::blocking},       {"cgaClusterSize", &ncclConfig_t::cgaClusterSize},
      {"minCTAs", &ncclConfig_t::minCTAs},         {"maxCTAs", &ncclConfig_t::maxCTAs},
      {"splitShare", &ncclConfig_t::splitShare},   {"trafficClass", &ncclConfig_t::trafficClass},
      {"collnetEnable", &ncclConfig_t::collnetEnable}, {"CTAPolicy", &ncclConfig_t::CTAPolicy},
      {"shrinkShare", &ncclConfig_t::shrinkShare}, {"nvlsCTAs", &ncclConfig_t::nvlsCTAs},
      {"nChannelsPerNetPeer", &ncclConfig_t::nChannelsPerNetPeer},
      {"nvlinkCentricSched", &ncclConfig_t::nvlinkCentricSched},
  };
  for (const auto& [name, member] : kInts) {
    if (present(&(c->*member), sizeof(int))) num((k + name).c_str(), c->*member);
  }
  static constexpr std::pair<const char*, const char* ncclConfig_t::*> kStrings[] = {
      {"netName", &ncclConfig_t::netName}, {"commName", &ncclConfig_t::commName}};
  for (const auto& [name, member] : kStrings) {
    if (present(&(c->*member), sizeof(const char*))) str((k + name).c_str(), c->*member);
  }
  return *this;
}

Call& Call::coll_config(const char* key, const ncclCollConfig_t* c) {
  if (!versioned(key, c)) return *this;
  auto present = [c](const void* field, size_t size) { return within(c, field, size); };
  std::string k = std::string(key) + ".";
  static constexpr std::pair<const char*, int ncclCollConfig_t::*> kInts[] = {
      {"minCTAs", &ncclCollConfig_t::minCTAs},     {"maxCTAs", &ncclCollConfig_t::maxCTAs},
      {"nvlsCTAs", &ncclCollConfig_t::nvlsCTAs},   {"cgaClusterSize", &ncclCollConfig_t::cgaClusterSize},
      {"forceAlgSelection", &ncclCollConfig_t::forceAlgSelection}, {"CTAPolicy", &ncclCollConfig_t::CTAPolicy},
  };
  for (const auto& [name, member] : kInts) {
    if (present(&(c->*member), sizeof(int))) num((k + name).c_str(), c->*member);
  }
  if (present(&c->ext, sizeof(c->ext))) ptr((k + "ext").c_str(), c->ext);
  if (present(&c->algSelection, sizeof(c->algSelection))) str((k + "algSelection").c_str(), c->algSelection);
  if (present(&c->userProfilerTag, sizeof(c->userProfilerTag)))
    num((k + "userProfilerTag").c_str(), static_cast<long long>(c->userProfilerTag));
  if (present(&c->launchCompletionEvent, sizeof(c->launchCompletionEvent)))
    ptr((k + "launchCompletionEvent").c_str(), c->launchCompletionEvent);
  return *this;
}

ncclResult_t Call::commit() {
  num("result", result_);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.log.push_back(line_);
  return result_;
}

ncclComm_t new_comm(int nranks, int rank, int device) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto* c = new ncclComm{kCommMagic, nranks, rank, device, ++s.comm_serial};
  s.comms.insert(c);
  return c;
}

bool delete_comm(ncclComm_t comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.comms.erase(comm) == 0) return false;
  delete comm;
  return true;
}

bool known_comm(ncclComm_t comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.comms.count(comm) != 0;
}

void* new_allocation(size_t bytes) {
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (p == nullptr) return nullptr;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.allocations.insert(p);
  return p;
}

bool delete_allocation(void* p) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.allocations.erase(p) == 0) return false;
  }
  std::free(p);
  return true;
}

uintptr_t next_token() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.token += 0x10;
  return s.token;
}

}  // namespace fake_nccl

extern "C" {

int fake_nccl_call_count(void) {
  fake_nccl::State& s = fake_nccl::state();
  std::lock_guard<std::mutex> lock(s.mu);
  return static_cast<int>(s.log.size());
}

const char* fake_nccl_call(int i) {
  fake_nccl::State& s = fake_nccl::state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (i < 0 || static_cast<size_t>(i) >= s.log.size()) return nullptr;
  return s.log[static_cast<size_t>(i)].c_str();
}

void fake_nccl_reset(void) {
  fake_nccl::State& s = fake_nccl::state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.log.clear();
  s.results.clear();
}

void fake_nccl_set_result(const char* name, int result) {
  if (name == nullptr) return;
  fake_nccl::State& s = fake_nccl::state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (result < 0) s.results.erase(name);
  else s.results[name] = result;
}

}  // extern "C"
