#include "id_file.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

namespace purlin::native_test {

bool publish_id(const std::string& path, const ncclUniqueId& id) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(id.internal, sizeof id.internal);
    if (!out.good()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

bool read_id(const std::string& path, ncclUniqueId* id) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kIdWaitSeconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id->internal, sizeof id->internal)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace purlin::native_test
