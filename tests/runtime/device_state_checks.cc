#include "device_state_checks.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>

#include "policy/policy.h"
#include "runtime/communicator.h"
#include "runtime/device_state.h"

namespace purlin::runtime::testing {
namespace {

constexpr std::size_t kStaging = 1 << 20;

std::string cuda(cudaError_t e, const char* what) {
  return e == cudaSuccess ? "" : std::string(what) + ": " + cudaGetErrorString(e);
}

// Copies `bytes` at a device address back and reports the first non-zero byte.
std::string expect_zero(const void* device, std::size_t bytes, const std::string& what) {
  std::vector<unsigned char> host(bytes, 0xAB);
  if (bytes == 0) return "";
  if (auto e = cuda(cudaMemcpy(host.data(), device, bytes, cudaMemcpyDefault), what.c_str());
      !e.empty()) {
    return e;
  }
  const auto it = std::find_if(host.begin(), host.end(), [](unsigned char b) { return b != 0; });
  if (it == host.end()) return "";
  return what + ": byte " + std::to_string(it - host.begin()) + " is not zero";
}

unsigned char pattern(int rank, std::size_t i) {
  return static_cast<unsigned char>(rank * 71 + i * 13 + (i >> 9));
}

std::vector<std::uintptr_t> read_table(const void* device, int ranks, std::string& err) {
  std::vector<std::uintptr_t> t(static_cast<std::size_t>(ranks));
  err = cuda(cudaMemcpy(t.data(), device, t.size() * sizeof(void*), cudaMemcpyDefault),
             "read peer table");
  return t;
}

std::string check(Communicator& comm, DeviceState& state, PointerBoard* board) {
  const int rank = comm.rank();
  const int ranks = comm.size();
  const snac::Handle& h = state.handle();
  if (h.rank != rank || h.ranks != ranks) return "handle rank/ranks wrong";
  if (h.staging_bytes != kStaging || h.slots != 64 || h.packet_capacity != 8192) {
    return "handle geometry differs from the config";
  }
  if (h.epoch_slots < policy::max_workers(state.policy())) return "too few epoch slots";
  // Zero-copy needs one address space and one GPU (the library's one_address_space_and_gpu):
  // threads (a board) all on the same GPU, whatever other GPUs the machine has; never separate
  // processes.
  const bool one_space_one_gpu =
      board != nullptr && std::all_of(board->devices.begin(), board->devices.end(),
                                      [&](int d) { return d == board->devices.front(); });
  if (h.inputs_peer_visible != one_space_one_gpu) {
    return std::string("inputs_peer_visible is ") + (h.inputs_peer_visible ? "set" : "clear") +
           " for ranks " + (board != nullptr ? "in one process" : "in separate processes");
  }
  if (state.device_bytes() < kStaging) return "device_bytes too small";

  std::string err;
  const auto staging = read_table(h.staging, ranks, err);
  if (!err.empty()) return err;
  const auto signals = read_table(h.signals, ranks, err);
  if (!err.empty()) return err;
  const auto packets = read_table(h.packets, ranks, err);
  if (!err.empty()) return err;
  if (board != nullptr) {
    auto& mine = board->tables[static_cast<std::size_t>(rank)];
    mine = staging;
    mine.insert(mine.end(), signals.begin(), signals.end());
    mine.insert(mine.end(), packets.begin(), packets.end());
  }

  // Every word a peer or a launch may read starts zero, read through the peers' mappings.
  const std::size_t signal_bytes = h.signal_layout().words() * sizeof(snac::Flag);
  const std::size_t packet_bytes = h.packet_layout().packets() * sizeof(snac::Packet);
  for (int r = 0; r < ranks; ++r) {
    const std::string peer = " of rank " + std::to_string(r);
    for (const std::string& e :
         {expect_zero(reinterpret_cast<void*>(staging[r]), kStaging, "staging" + peer),
          expect_zero(reinterpret_cast<void*>(signals[r]), signal_bytes, "signals" + peer),
          expect_zero(reinterpret_cast<void*>(packets[r]), packet_bytes, "packets" + peer)}) {
      if (!e.empty()) return e;
    }
  }
  for (const std::string& e :
       {expect_zero(h.epochs, static_cast<std::size_t>(h.epoch_slots) * 8, "epochs"),
        expect_zero(h.counters, h.counter_layout().words() * 8, "counters"),
        expect_zero(h.scratch, h.packet_layout().scratch_bytes(), "scratch")}) {
    if (!e.empty()) return e;
  }
  if (comm.bootstrap().barrier() != ncclSuccess) return "barrier";

  // Each rank writes its own staging; every rank then reads every peer's through its mapping.
  std::vector<unsigned char> out(kStaging);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = pattern(rank, i);
  err = cuda(cudaMemcpy(reinterpret_cast<void*>(staging[rank]), out.data(), out.size(),
                        cudaMemcpyDefault),
             "write own staging");
  if (!err.empty()) return err;
  if (comm.bootstrap().barrier() != ncclSuccess) return "barrier";
  for (int r = 0; r < ranks; ++r) {
    std::vector<unsigned char> in(kStaging);
    err = cuda(cudaMemcpy(in.data(), reinterpret_cast<void*>(staging[r]), in.size(),
                          cudaMemcpyDefault),
               "read peer staging");
    if (!err.empty()) return err;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (in[i] != pattern(r, i)) return "staging of rank " + std::to_string(r) + " differs";
    }
  }

  // Control: the host and device views are one pair of words.
  const snac::DeviceControl c = state.control();
  if (c.abort == nullptr || c.status == nullptr) return "control words missing";
  if (state.status() != snac::Status::ok) return "status not ok initially";
  const unsigned code = static_cast<unsigned>(snac::Status::too_many_workers);
  err = cuda(cudaMemcpy(c.status, &code, sizeof(code), cudaMemcpyDefault), "write status");
  if (!err.empty()) return err;
  if (state.status() != snac::Status::too_many_workers) return "status not seen by the host";
  unsigned seen = 0;
  err = cuda(cudaMemcpy(&seen, const_cast<unsigned*>(c.abort), sizeof(seen), cudaMemcpyDefault),
             "read abort");
  if (!err.empty()) return err;
  if (seen != 0) return "abort set initially";
  state.abort();
  err = cuda(cudaMemcpy(&seen, const_cast<unsigned*>(c.abort), sizeof(seen), cudaMemcpyDefault),
             "read abort");
  if (!err.empty()) return err;
  if (seen != 1) return "abort not seen through the device pointer";

  if (comm.bootstrap().barrier() != ncclSuccess) return "barrier";
  return "";
}

}  // namespace

int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::string create_and_check(const ncclUniqueId& id, int rank, int nranks, int device,
                             PointerBoard* board) {
  if (auto e = cuda(cudaSetDevice(device), "cudaSetDevice"); !e.empty()) return e;
  std::unique_ptr<Communicator> comm;
  if (Communicator::create(id, rank, nranks, device, &comm) != ncclSuccess) {
    return "Communicator::create failed";
  }
  DeviceStateConfig config = DeviceStateConfig::from_env();
  config.staging_bytes = kStaging;
  config.packet_bytes = 64 * 1024;
  std::unique_ptr<DeviceState> state;
  if (DeviceState::create(*comm, config, &state) != ncclSuccess) {
    return "DeviceState::create failed";
  }
  const std::string result = check(*comm, *state, board);
  // Nobody unmaps while a peer may still be reading through its mapping.
  if (comm->bootstrap().barrier() != ncclSuccess && result.empty()) return "final barrier";
  state.reset();
  return result;
}

}  // namespace purlin::runtime::testing
