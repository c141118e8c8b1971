// Test-side access to the fake NCCL's log (fake_nccl.h) when the library under test loaded
// the fake privately: finds it with dlopen(RTLD_NOLOAD) and parses its log lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fake_nccl {

struct LoggedCall {
  std::string name;                          // "AllReduce"
  std::map<std::string, std::string> args;   // decoded values, "result" included
  std::string line;                          // as logged, for failure messages

  bool has(const std::string& key) const { return args.count(key) != 0; }
  // "" when absent (a test comparing it then fails and prints `line`).
  std::string arg(const std::string& key) const;
  long long num(const std::string& key) const;  // decimal value; 0 when absent
  uintptr_t ptr(const std::string& key) const;  // 0x-hex value; 0 when absent
};

// Formats a pointer as the fake logs it.
std::string hex(const void* p);

class Client {
 public:
  Client() = default;  // not loaded
  // `path`: the file the library under test loaded. loaded() is false until it has.
  explicit Client(const char* path);

  bool loaded() const { return count_ != nullptr; }
  std::vector<LoggedCall> calls() const;
  std::vector<LoggedCall> calls_named(const std::string& name) const;
  void reset() const;
  void set_result(const char* name, int result) const;

 private:
  int (*count_)() = nullptr;
  const char* (*call_)(int) = nullptr;
  void (*reset_)() = nullptr;
  void (*set_result_)(const char*, int) = nullptr;
};

}  // namespace fake_nccl
