#include "fake_nccl_client.h"

#include <dlfcn.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

namespace fake_nccl {
namespace {

// Reverses the fake's percent-encoding of strings.
std::string decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

LoggedCall parse(const std::string& line) {
  LoggedCall call;
  call.line = line;
  std::istringstream in(line);
  in >> call.name;
  std::string field;
  while (in >> field) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    call.args[field.substr(0, eq)] = decode(field.substr(eq + 1));
  }
  return call;
}

template <class F>
F symbol(void* handle, const char* name) {
  return handle == nullptr ? nullptr : reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

std::string LoggedCall::arg(const std::string& key) const {
  auto it = args.find(key);
  return it == args.end() ? std::string() : it->second;
}

long long LoggedCall::num(const std::string& key) const { return std::strtoll(arg(key).c_str(), nullptr, 10); }

uintptr_t LoggedCall::ptr(const std::string& key) const {
  return static_cast<uintptr_t>(std::strtoull(arg(key).c_str(), nullptr, 16));
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buf;
}

Client::Client(const char* path) {
  // RTLD_NOLOAD: only a reference to the copy the library under test loaded, never a
  // second, separately initialized one.
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  count_ = symbol<int (*)()>(handle, "fake_nccl_call_count");
  call_ = symbol<const char* (*)(int)>(handle, "fake_nccl_call");
  reset_ = symbol<void (*)()>(handle, "fake_nccl_reset");
  set_result_ = symbol<void (*)(const char*, int)>(handle, "fake_nccl_set_result");
  if (count_ == nullptr || call_ == nullptr || reset_ == nullptr || set_result_ == nullptr) count_ = nullptr;
}

std::vector<LoggedCall> Client::calls() const {
  std::vector<LoggedCall> out;
  if (!loaded()) return out;
  int n = count_();
  for (int i = 0; i < n; ++i) {
    if (const char* line = call_(i)) out.push_back(parse(line));
  }
  return out;
}

std::vector<LoggedCall> Client::calls_named(const std::string& name) const {
  std::vector<LoggedCall> out;
  for (LoggedCall& c : calls()) {
    if (c.name == name) out.push_back(std::move(c));
  }
  return out;
}

void Client::reset() const {
  if (loaded()) reset_();
}

void Client::set_result(const char* name, int result) const {
  if (loaded()) set_result_(name, result);
}

}  // namespace fake_nccl
