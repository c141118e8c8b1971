// One rank's check of runtime::DeviceState on a GPU, shared by the in-process (threads) and
// the multi-process (CUDA IPC) tests: handle fields, peer pointer tables, every word zero,
// peers' staging readable through the mappings, and the abort/status round trip.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace purlin::runtime::testing {

// Ranks of one process: where each runs, and the peer pointer tables they publish, to check
// that they agree (the same pointer for the same rank's block). tables[r] is written by rank r
// only.
struct PointerBoard {
  // devices[r]: rank r's GPU, as the caller places it.
  explicit PointerBoard(std::vector<int> rank_devices)
      : devices(std::move(rank_devices)), tables(devices.size()) {}
  std::vector<int> devices;
  std::vector<std::vector<std::uintptr_t>> tables;  // staging, signals, packets per peer
};

// GPUs visible to this process; 0 when CUDA reports none or fails.
int gpu_count();

// Forms the communicator as `rank` on `device`, creates the device state with a 1 MiB staging
// buffer and checks it; "" on success. `board` is null across processes.
std::string create_and_check(const ncclUniqueId& id, int rank, int nranks, int device,
                             PointerBoard* board);

}  // namespace purlin::runtime::testing
