// Counting Purlin's WARN lines in captured stderr: the error-path tests check that every
// refusal says exactly one thing, and that the one line names the offending argument.
#pragma once

#include <sstream>
#include <string>

namespace purlin::test {

// Number of "Purlin WARN" lines in `err`; the first one goes to *first.
inline int warn_lines(const std::string& err, std::string* first) {
  std::istringstream in(err);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.find("Purlin WARN") == std::string::npos) continue;
    if (n++ == 0) *first = line;
  }
  return n;
}

}  // namespace purlin::test
