// Arming Purlin's fault injection (src/base/fault.h) from a test that links libnccl.so.2:
// the library is reached only through its exported names, so the setting travels as
// PURLIN_FAULT_INJECT and ncclResetDebugInit makes the library read it again.
#pragma once

#include <cstdlib>

#include "nccl_api.h"  // ncclResetDebugInit as a function

namespace purlin::test {

// `spec`: "<site>" (every passage fails) or "<site>:<N>" (the Nth passage only).
inline void arm_faults(const char* spec) {
  setenv("PURLIN_FAULT_INJECT", spec, 1);
  ncclResetDebugInit();
}

inline void disarm_faults() {
  unsetenv("PURLIN_FAULT_INJECT");
  ncclResetDebugInit();
}

}  // namespace purlin::test
