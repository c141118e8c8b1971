// Counting Purlin's WARN lines in captured stderr: the error-path tests check that every
// refusal says exactly one thing, and that the one line names the offending argument.
#pragma once

#include <sstream>
#include <string>

namespace purlin::test {

// What marks a WARN line as Purlin's (base/log.h): NCCL's level word, then Purlin's tag,
// which tells it from a line of the real NCCL.
inline constexpr char kPurlinWarn[] = "NCCL WARN Purlin: ";

inline bool is_purlin_warn(const std::string& line) { return line.find(kPurlinWarn) != std::string::npos; }

// Number of Purlin's WARN lines in `err`; the first one goes to *first.
inline int warn_lines(const std::string& err, std::string* first) {
  std::istringstream in(err);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (!is_purlin_warn(line)) continue;
    if (n++ == 0) *first = line;
  }
  return n;
}

}  // namespace purlin::test
