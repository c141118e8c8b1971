#include "placement.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace purlin::native_test {
namespace {

// `name` as a whole number of at least `least`, `fallback` when unset or empty; -1 with *error
// for anything else (a typo must not fall back to the default layout).
int env_int(const char* name, int least, int fallback, std::string* error) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < least || n > INT_MAX) {
    *error = std::string(name) + "=" + v + " is not a whole number of at least " + std::to_string(least);
    return -1;
  }
  return static_cast<int>(n);
}

}  // namespace

int visible_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

int world_gpus(std::string* error) {
  const int gpus = env_int("PURLIN_TEST_GPUS", 1, 1, error);
  if (gpus < 1) return -1;
  if (const int visible = visible_gpus(); gpus > visible) {
    *error = "PURLIN_TEST_GPUS=" + std::to_string(gpus) + " asks for more GPUs than the " +
             std::to_string(visible) + " visible";
    return -1;
  }
  return gpus;
}

cudaError_t synchronize_devices(int gpus) {
  for (int d = 0; d < gpus; ++d) {
    const ScopedDevice on(d);
    if (on.error() != cudaSuccess) return on.error();
    if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

int process_device(const char* variable, std::string* error) {
  const char* set = std::getenv(variable);
  const char* name = set != nullptr && *set != '\0' ? variable : "LOCAL_RANK";
  const int device = env_int(name, 0, 0, error);
  if (device < 0) return -1;
  if (const int visible = visible_gpus(); device >= visible) {
    *error = std::string(name) + "=" + std::to_string(device) + " is not one of the " + std::to_string(visible) +
             " visible GPUs";
    return -1;
  }
  return device;
}

int use_process_device(int rank) {
  std::string error;
  const int device = process_device("PURLIN_TEST_DEVICE", &error);
  if (device >= 0) {
    const cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) return device;
    error = std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e);
  }
  std::fprintf(stderr, "[rank %d] cannot take its GPU: %s\n", rank, error.c_str());
  return -1;
}

}  // namespace purlin::native_test
