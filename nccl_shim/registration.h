// Buffer registrations made before the real communicator exists are recorded by Purlin
// and handed to the real NCCL when (if ever) it is created, so that the user's handle
// stays valid either way.
#pragma once

#include <nccl.h>

#include <cstddef>

#include "real_nccl.h"

struct ncclComm;

namespace purlin::shim {

// What an ncclCommRegister handle points to.
struct Registration {
  void* buff = nullptr;
  size_t bytes = 0;
  void* real_handle = nullptr;  // the real NCCL's handle once registered there
};

// What an ncclWindow_t points to when no real NCCL is available: a record of the range.
// With a real NCCL the user gets the real window, which device code can dereference.
struct NativeWindow {
  void* buff = nullptr;
  size_t bytes = 0;
};

// Registers with the real NCCL every registration of c that it does not know yet.
ncclResult_t register_pending(ncclComm* c, const RealNccl* rn);

// Frees Purlin's registration records of c (the real NCCL frees its own at destroy).
void free_registrations(ncclComm* c);

}  // namespace purlin::shim
