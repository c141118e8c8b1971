#include "runner.h"

#include <purlin/purlin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <utility>

#include "placement.h"
#include "reference.h"
#include "values.h"

namespace purlin::native_test {
namespace {

// Guard bytes before and after every buffer; a multiple of 256 keeps the bases as aligned as
// cudaMalloc's, so the case's shifts alone decide the misalignment.
constexpr std::size_t kGuard = 256;
constexpr unsigned char kSentinel = 0xA5;
// Elements per image-building task: large enough to amortize a task, small enough to spread.
constexpr std::size_t kTaskElems = std::size_t{1} << 20;

std::string nccl_error(ncclResult_t r, ncclComm_t comm) {
  std::string s = std::string(ncclGetErrorString(r)) + " (" + std::to_string(static_cast<int>(r)) + ")";
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') s += ": " + std::string(last);
  return s;
}

std::string hex(const unsigned char* p, std::size_t n) {
  std::string s = "0x";
  char b[3];
  for (std::size_t i = n; i-- > 0;) {  // little-endian: most significant byte first
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// Compares `got` with `want` (framed buffer: guard + shift, then payload_elems elements, then
// guard). Appends up to four mismatches to *report; returns the number of mismatching elements
// or guard bytes.
std::size_t compare(const char* what, const unsigned char* got, const unsigned char* want,
                    std::size_t bytes, std::size_t payload_at, std::size_t payload_elems,
                    std::size_t es, std::string* report) {
  if (std::memcmp(got, want, bytes) == 0) return 0;
  const std::size_t payload_end = payload_at + payload_elems * es;
  std::size_t bad = 0;
  for (std::size_t off = 0; off < bytes;) {
    const bool payload = off >= payload_at && off < payload_end;
    const std::size_t step = payload ? es : 1;
    if (std::memcmp(got + off, want + off, step) != 0) {
      if (++bad <= 4) {
        *report += "    " + std::string(what) + " ";
        if (payload) {
          *report += "element " + std::to_string((off - payload_at) / es);
        } else {
          *report += off < payload_at ? "guard byte " + std::to_string(off) + " before the buffer"
                                      : "guard byte " + std::to_string(off - payload_end) + " after the buffer";
        }
        *report += ": got " + hex(got + off, step) + ", expected " + hex(want + off, step) + "\n";
      }
    }
    off += step;
  }
  return bad;
}

// Appends tasks that write `len` elements of rank `rank`'s input from element `src` to `dst`.
void input_tasks(ncclDataType_t t, int rank, std::size_t src, std::size_t len, unsigned char* dst,
                 std::vector<std::function<void()>>* tasks) {
  const std::size_t es = type_bytes(t);
  for (std::size_t b = 0; b < len; b += kTaskElems) {
    const std::size_t n = std::min(kTaskElems, len - b);
    tasks->push_back([=] { reference_input(t, rank, src + b, n, dst + b * es); });
  }
}

void run_tasks(const std::vector<std::function<void()>>& tasks, bool parallel) {
  parallel_tasks(tasks.size(), [&](std::size_t i) { tasks[i](); }, parallel);
}

// Cases below this many bytes over all local buffers are checked on one thread.
constexpr std::size_t kParallelBytes = std::size_t{4} << 20;

// Grows `buffer` to `bytes` on the current device and checks that this is `device`: the library
// enables peer access between all GPUs of a process, so a buffer on another GPU than its rank's
// would pass every check, only slower, and hide a placement bug. "" or what went wrong.
std::string reserve_on(int device, std::size_t bytes, DeviceBuffer* buffer) {
  if (const cudaError_t e = buffer->reserve(bytes); e != cudaSuccess) return cudaGetErrorString(e);
  cudaPointerAttributes a{};
  if (const cudaError_t e = cudaPointerGetAttributes(&a, buffer->get()); e != cudaSuccess) {
    return std::string("cudaPointerGetAttributes: ") + cudaGetErrorString(e);
  }
  if (a.type != cudaMemoryTypeDevice || a.device != device) {
    return "buffer allocated on GPU " + std::to_string(a.device) + ", not on the rank's GPU " + std::to_string(device);
  }
  return "";
}

}  // namespace

struct Runner::Slot {
  LocalRank local;
  RankPlan plan;
  DeviceBuffer send_buffer;  // out of place only
  DeviceBuffer recv_buffer;  // the one buffer in place
  DeviceBuffer scalar;       // PreMulSum's device-resident scalar
  PinnedBuffer download;
  std::vector<unsigned char> expected;
  std::size_t send_framed = 0;  // bytes of send_buffer in use (0 in place)
  std::size_t recv_framed = 0;
  unsigned char* send = nullptr;
  unsigned char* recv = nullptr;
  ncclRedOp_t op = ncclSum;
  bool op_created = false;
  unsigned char scalar_value[8] = {};  // the source of the device scalar's upload
};

Runner::Runner(int nranks, std::vector<LocalRank> ranks) : nranks_(nranks) {
  for (const LocalRank& r : ranks) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->local = r;
  }
}

int Runner::device(std::size_t i) const { return slots_[i]->local.device; }

Runner::~Runner() {
  for (auto& s : slots_) {
    if (s->op_created) ncclRedOpDestroy(s->op, s->local.comm);
  }
}

bool Runner::prepare(const Case& c, std::string* error) {
  case_ = c;
  const std::size_t es = type_bytes(c.type);
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const int rank = s.local.rank;
    const cudaStream_t st = s.local.stream;
    const int device = s.local.device;
    const ScopedDevice on(device);
    if (on.error() != cudaSuccess) {
      *error = "rank " + std::to_string(rank) + ": cudaSetDevice(" + std::to_string(device) +
               "): " + cudaGetErrorString(on.error());
      return false;
    }
    const DeviceTables& tables = tables_.try_emplace(device).first->second;
    if (!tables.ok()) {
      *error = "could not upload the value tables to GPU " + std::to_string(device);
      return false;
    }
    if (s.op_created) {  // left by a case whose prepare failed half way
      ncclRedOpDestroy(s.op, s.local.comm);
      s.op_created = false;
    }
    s.plan = plan_rank(c, nranks_, rank);
    const RankPlan& p = s.plan;
    const std::size_t recv_elems = p.in_place ? p.buffer_elems : p.recv_elems;
    s.recv_framed = kGuard + c.recv_shift + recv_elems * es + kGuard;
    s.send_framed = p.in_place ? 0 : kGuard + c.send_shift + p.send_elems * es + kGuard;
    std::string placed = reserve_on(device, s.recv_framed, &s.recv_buffer);
    if (placed.empty() && s.send_framed != 0) placed = reserve_on(device, s.send_framed, &s.send_buffer);
    if (!placed.empty()) {
      *error = "rank " + std::to_string(rank) + ": buffer setup: " + placed;
      return false;
    }
    cudaError_t e = cudaMemsetAsync(s.recv_buffer.get(), kSentinel, s.recv_framed, st);
    if (e == cudaSuccess && s.send_framed != 0) e = cudaMemsetAsync(s.send_buffer.get(), kSentinel, s.send_framed, st);
    if (p.in_place) {
      unsigned char* base = s.recv_buffer.get() + kGuard + c.recv_shift;
      s.send = base + p.send_at * es;
      s.recv = base + p.recv_at * es;
    } else {
      s.send = s.send_buffer.get() + kGuard + c.send_shift;
      s.recv = s.recv_buffer.get() + kGuard + c.recv_shift;
    }
    if (e == cudaSuccess) e = fill_input(s.send, es, tables.get(c.type), rank, c.salt, p.send_elems, st);
    if (e != cudaSuccess) {
      *error = "rank " + std::to_string(rank) + ": buffer setup: " + cudaGetErrorString(e);
      return false;
    }

    s.op = static_cast<ncclRedOp_t>(c.op == Op::kPreMulHost || c.op == Op::kPreMulDevice ? ncclSum : static_cast<int>(c.op));
    if (reduces(c.coll) && (c.op == Op::kPreMulHost || c.op == Op::kPreMulDevice)) {
      ncclResult_t r = ncclSuccess;
      with_type(c.type, [&]<class E>() {
        if (c.op == Op::kPreMulHost) {
          E v = host_scalar<E>(rank);  // read during the call: the op keeps the value, not the address
          r = ncclRedOpCreatePreMulSum(&s.op, &v, c.type, ncclScalarHostImmediate, s.local.comm);
          return;
        }
        const E v = device_scalar<E>(rank);
        std::memcpy(s.scalar_value, &v, sizeof(E));
        placed = reserve_on(device, sizeof(E), &s.scalar);
        if (placed.empty()) r = ncclRedOpCreatePreMulSum(&s.op, s.scalar.get(), c.type, ncclScalarDevice, s.local.comm);
        // Written after the op exists and in stream order before the call: the kernel must read
        // the scalar at run time.
        if (placed.empty() && r == ncclSuccess) {
          e = cudaMemcpyAsync(s.scalar.get(), s.scalar_value, sizeof(E), cudaMemcpyHostToDevice, st);
        }
      });
      if (!placed.empty() || e != cudaSuccess || r != ncclSuccess) {
        *error = "rank " + std::to_string(rank) + ": ncclRedOpCreatePreMulSum: " +
                 (!placed.empty()    ? placed
                  : e != cudaSuccess ? std::string(cudaGetErrorString(e))
                                     : nccl_error(r, s.local.comm));
        return false;
      }
      s.op_created = true;
    }
  }
  return true;
}

ncclResult_t Runner::issue(std::size_t i) const {
  const Slot& s = *slots_[i];
  const Case& c = case_;
  const RankPlan& p = s.plan;
  ncclComm_t comm = s.local.comm;
  cudaStream_t st = s.local.stream;
  const std::size_t* displs = p.null_displs ? nullptr : p.displs.data();
  switch (c.coll) {
    case Coll::kAllReduce: return ncclAllReduce(s.send, s.recv, c.count, c.type, s.op, comm, st);
    case Coll::kAllGather: return ncclAllGather(s.send, s.recv, c.count, c.type, comm, st);
    case Coll::kReduceScatter: return ncclReduceScatter(s.send, s.recv, c.count, c.type, s.op, comm, st);
    case Coll::kAllToAll: return ncclAlltoAll(s.send, s.recv, c.count, c.type, comm, st);
    case Coll::kBroadcast: return ncclBroadcast(s.send, s.recv, c.count, c.type, c.root, comm, st);
    case Coll::kReduce: return ncclReduce(s.send, s.recv, c.count, c.type, s.op, c.root, comm, st);
    case Coll::kGather: return ncclGather(s.send, s.recv, c.count, c.type, c.root, comm, st);
    case Coll::kScatter: return ncclScatter(s.send, s.recv, c.count, c.type, c.root, comm, st);
    case Coll::kAllGatherV:
      return purlinAllGatherV(s.send, p.counts[static_cast<std::size_t>(s.local.rank)], s.recv, p.counts.data(),
                              displs, c.type, comm, st);
    case Coll::kReduceScatterV:
      return purlinReduceScatterV(s.send, p.counts.data(), displs, s.recv,
                                  p.counts[static_cast<std::size_t>(s.local.rank)], c.type, s.op, comm, st);
    case Coll::kAllToAllV:
      return purlinAllToAllV(s.send, p.counts.data(), displs, s.recv, p.rcounts.data(),
                             p.null_displs ? nullptr : p.rdispls.data(), p.maxcount, c.type, comm, st);
  }
  return ncclInternalError;
}

std::string Runner::finish(const std::vector<ncclResult_t>& results, ncclResult_t group) {
  std::string report;
  bool synced = true;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    const std::string who = "  rank " + std::to_string(s.local.rank) + ": ";
    const ncclResult_t r = i < results.size() ? results[i] : ncclInternalError;
    if (s.plan.refused) {
      // Refused at the call or at ncclGroupEnd; a zero count may be accepted as a no-op.
      const auto refusal = [](ncclResult_t x) { return x == ncclInvalidUsage || x == ncclInvalidArgument; };
      const bool refused = refusal(r) || (r == ncclSuccess && refusal(group));
      const bool noop = case_.count == 0 && r == ncclSuccess && group == ncclSuccess;
      if (!refused && !noop) report += who + "expected a refusal, got " + nccl_error(r != ncclSuccess ? r : group, s.local.comm) + "\n";
    } else if (r != ncclSuccess || group != ncclSuccess) {
      report += who + "call returned " + nccl_error(r != ncclSuccess ? r : group, s.local.comm) + "\n";
    }
    if (const cudaError_t e = cudaStreamSynchronize(s.local.stream); e != cudaSuccess) {
      report += who + "stream: " + cudaGetErrorString(e) + "\n";
      synced = false;
    }
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(s.local.comm, &async) != ncclSuccess || async != ncclSuccess) {
      report += who + "ncclCommGetAsyncError: " + nccl_error(async, s.local.comm) + "\n";
    }
    if (s.op_created) {
      if (const ncclResult_t d = ncclRedOpDestroy(s.op, s.local.comm); d != ncclSuccess) {
        report += who + "ncclRedOpDestroy: " + nccl_error(d, s.local.comm) + "\n";
      }
      s.op_created = false;
    }
  }
  if (synced) report += check_bytes();
  return report;
}

std::string Runner::check_bytes() {
  const Case& c = case_;
  const std::size_t es = type_bytes(c.type);
  std::string report;
  std::size_t total = 0;
  for (auto& sp : slots_) total += sp->recv_framed + sp->send_framed;
  const bool big = total >= kParallelBytes;

  // Downloads first, so that a failing copy is reported before any comparison.
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const ScopedDevice on(s.local.device);
    cudaError_t e = s.download.reserve(std::max(s.recv_framed, s.send_framed));
    if (e == cudaSuccess) e = cudaMemcpy(s.download.get(), s.recv_buffer.get(), s.recv_framed, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return "  rank " + std::to_string(s.local.rank) + ": download: " + cudaGetErrorString(e) + "\n";
  }

  // Each distinct reduction once (every rank of an AllReduce expects the same one).
  std::map<std::pair<std::size_t, std::size_t>, std::vector<unsigned char>> reduced;
  for (auto& sp : slots_) {
    for (const Segment& w : sp->plan.writes) {
      if (w.src_rank != Segment::kReduced || w.len == 0) continue;
      auto [it, fresh] = reduced.try_emplace({w.src, w.len});
      if (!fresh) continue;
      it->second.resize(w.len * es);
      reference_reduce(c.type, c.op, nranks_, c.salt + w.src, w.len, it->second.data());
    }
  }

  // Expected receive images: sentinel, the in-place input, then what the call writes.
  std::vector<std::function<void()>> inputs, writes;
  for (auto& sp : slots_) {
    Slot& s = *sp;
    const RankPlan& p = s.plan;
    s.expected.resize(std::max(s.recv_framed, s.send_framed));
    unsigned char* base = s.expected.data() + kGuard + c.recv_shift;
    if (p.in_place) input_tasks(c.type, s.local.rank, c.salt, p.send_elems, base + p.send_at * es, &inputs);
    unsigned char* out = base + p.recv_at * es;
    for (const Segment& w : p.writes) {
      if (w.len == 0) continue;
      if (w.src_rank == Segment::kReduced) {
        const unsigned char* from = reduced.at({w.src, w.len}).data();
        writes.push_back([=] { std::memcpy(out + w.dst * es, from, w.len * es); });
      } else {
        input_tasks(c.type, w.src_rank, c.salt + w.src, w.len, out + w.dst * es, &writes);
      }
    }
  }
  parallel_tasks(slots_.size(), [&](std::size_t i) {
    std::memset(slots_[i]->expected.data(), kSentinel, slots_[i]->recv_framed);
  }, big);
  run_tasks(inputs, big);
  run_tasks(writes, big);

  std::vector<std::string> reports(slots_.size());
  parallel_tasks(slots_.size(), [&](std::size_t i) {
    Slot& s = *slots_[i];
    const RankPlan& p = s.plan;
    const std::size_t payload = p.in_place ? p.buffer_elems : p.recv_elems;
    const std::size_t bad = compare(p.in_place ? "buffer" : "recvbuff", s.download.get(), s.expected.data(),
                                    s.recv_framed, kGuard + c.recv_shift, payload, es, &reports[i]);
    if (bad != 0) reports[i] += "    (" + std::to_string(bad) + " mismatches in the receive buffer)\n";
  }, big);

  // Out of place, the send buffer must come back unchanged.
  for (auto& sp : slots_) {
    Slot& s = *sp;
    if (s.send_framed == 0) continue;
    const ScopedDevice on(s.local.device);
    if (const cudaError_t e = cudaMemcpy(s.download.get(), s.send_buffer.get(), s.send_framed, cudaMemcpyDeviceToHost);
        e != cudaSuccess) {
      return "  rank " + std::to_string(s.local.rank) + ": download: " + cudaGetErrorString(e) + "\n";
    }
  }
  parallel_tasks(slots_.size(), [&](std::size_t i) {
    std::memset(slots_[i]->expected.data(), kSentinel, slots_[i]->send_framed);
  }, big);
  inputs.clear();
  for (auto& sp : slots_) {
    Slot& s = *sp;
    if (s.send_framed != 0) {
      input_tasks(c.type, s.local.rank, c.salt, s.plan.send_elems, s.expected.data() + kGuard + c.send_shift, &inputs);
    }
  }
  run_tasks(inputs, big);
  parallel_tasks(slots_.size(), [&](std::size_t i) {
    Slot& s = *slots_[i];
    if (s.send_framed == 0) return;
    const std::size_t bad = compare("sendbuff", s.download.get(), s.expected.data(), s.send_framed,
                                    kGuard + c.send_shift, s.plan.send_elems, es, &reports[i]);
    if (bad != 0) reports[i] += "    (" + std::to_string(bad) + " changes in the send buffer)\n";
  }, big);

  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!reports[i].empty()) report += "  rank " + std::to_string(slots_[i]->local.rank) + ":\n" + reports[i];
  }
  return report;
}

}  // namespace purlin::native_test
