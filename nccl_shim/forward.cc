#include "forward.h"

#include <cuda_runtime.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/fault.h"
#include "coll_config.h"
#include "comm.h"
#include "comm_config.h"
#include "device_scope.h"
#include "errors.h"
#include "registration.h"

namespace purlin::shim {
namespace {

struct IdMessage {
  ncclResult_t status;
  ncclUniqueId id;
};

}  // namespace

ncclResult_t require_real(const char* fn, const RealNccl** out) {
  fault::point("real_nccl");
  *out = real_nccl();
  if (*out == nullptr)
    return fail(ncclSystemError, fn,
                "no real NCCL library to forward to; set PURLIN_NCCL_LIBRARY=/path/to/libnccl.so.2 (%s)",
                real_nccl_describe().c_str());
  return ncclSuccess;
}

ncclResult_t missing_entry(const char* fn) {
  const RealNccl* rn = real_nccl();
  const RealNcclEntryInfo* info = entry_info(fn);
  const std::string added = info != nullptr ? " (added in NCCL " + version_text(info->since) + ")" : "";
  if (rn == nullptr)
    return fail(ncclInvalidUsage, fn, "needs the real NCCL%s, and none is loaded (%s)", added.c_str(),
                real_nccl_describe().c_str());
  return fail(ncclInvalidUsage, fn, "not available: the real NCCL %s (%s) predates this function%s",
              version_text(rn->version).c_str(), rn->path.c_str(), added.c_str());
}

ncclResult_t ensure_real_comm(const char* fn, ncclComm* c) {
  if (c->real.load(std::memory_order_acquire) != nullptr) return ncclSuccess;
  std::lock_guard<std::mutex> lock(c->real_mu);
  if (c->real.load(std::memory_order_relaxed) != nullptr) return ncclSuccess;
  if (c->real_status != ncclSuccess) return c->real_status;
  fault::point("real_comm");

  const RealNccl* rn = nullptr;
  // Every rank finds (or fails to find) the same library in a well-formed job; a rank
  // that fails still takes part in the broadcast below so that no peer waits forever.
  ncclResult_t local = require_real(fn, &rn);
  IdMessage msg{};
  msg.status = local;
  if (c->rank == 0 && local == ncclSuccess) msg.status = rn->GetUniqueId(&msg.id);
  ncclResult_t res = c->core->bootstrap().broadcast(&msg, sizeof(msg), 0);
  if (res == ncclSuccess) res = local;  // this rank's own failure was reported already
  if (res == ncclSuccess && msg.status != ncclSuccess)
    res = fail(msg.status, fn, "real NCCL unique id unavailable on rank 0 (error %d)", msg.status);
  if (res == ncclSuccess) {
    DeviceScope device(c->cuda_device);
    // In the real library's own layout, so that it reads every field it knows (comm_config.h).
    ncclConfig_t cfg = config_for_version(c->config, rn->version);
    cfg.blocking = 1;  // forwarded calls complete before Purlin returns; see README
    ncclComm_t real = nullptr;
    res = rn->CommInitRankConfig(&real, c->nranks, msg.id, c->rank, &cfg);
    if (res == ncclSuccess) {
      real_handle_add(real);
      c->real.store(real, std::memory_order_release);
      res = register_pending(c, rn);
    } else {
      fail(res, fn, "real NCCL ncclCommInitRankConfig failed (rank %d of %d): %s", c->rank,
           c->nranks, rn->GetErrorString(res));
    }
  }
  if (c->real.load(std::memory_order_relaxed) == nullptr) c->real_status = res;
  return res;
}

ncclResult_t forward_now(const Descriptor& d) {
  if (ncclResult_t r = ensure_real_comm(op_kind_name(d.kind), d.comm); r != ncclSuccess) return r;
  return issue_on_real(d, d.comm->real.load(std::memory_order_acquire));
}

namespace {

// An ncclXConfig call (coll_config.h): the real NCCL's own ncclXConfig takes the config
// whole. Without one (a real NCCL before 2.31) the plain call serves every config that asks
// nothing only the real ncclXConfig could give, with Purlin serving the rest; nullopt
// means "issue the plain call".
std::optional<ncclResult_t> issue_config_on_real(const Descriptor& d, ncclComm_t rc) {
  const std::string fn = std::string(op_kind_name(d.kind)) + "Config";
  const RealNccl* rn = real_nccl();
  const ncclCollConfig_t* c = d.coll.get();
  auto issue = [&](auto entry, auto... args) -> std::optional<ncclResult_t> {
    if (entry == nullptr) {
      if (needs_real_config_call(*c)) return missing_entry(fn.c_str());
      if (ncclResult_t r = apply_coll_config(fn.c_str(), *c, d.stream); r != ncclSuccess) return r;
      return std::nullopt;
    }
    if (ncclResult_t r = apply_fields_newer_than(fn.c_str(), *c, rn->version, d.stream); r != ncclSuccess) return r;
    return entry(args..., rc, d.stream, c);
  };
  switch (d.kind) {
    case OpKind::kAllReduce: return issue(rn->AllReduceConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.op);
    case OpKind::kAllGather: return issue(rn->AllGatherConfig, d.sendbuff, d.recvbuff, d.count, d.type);
    case OpKind::kReduceScatter: return issue(rn->ReduceScatterConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.op);
    case OpKind::kAllToAll: return issue(rn->AlltoAllConfig, d.sendbuff, d.recvbuff, d.count, d.type);
    case OpKind::kBroadcast: return issue(rn->BroadcastConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.root);
    case OpKind::kReduce: return issue(rn->ReduceConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.op, d.root);
    case OpKind::kGather: return issue(rn->GatherConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.root);
    case OpKind::kScatter: return issue(rn->ScatterConfig, d.sendbuff, d.recvbuff, d.count, d.type, d.root);
    default: return std::nullopt;  // no config variant (has_config_variant)
  }
}

}  // namespace

ncclResult_t issue_on_real(const Descriptor& d, ncclComm_t rc) {
  const char* fn = op_kind_name(d.kind);
  const RealNccl* rn = real_nccl();
  if (d.coll != nullptr) {
    if (std::optional<ncclResult_t> r = issue_config_on_real(d, rc)) return *r;
  }
  switch (d.kind) {
    case OpKind::kAllReduce: return call_real(fn, rn->AllReduce, d.sendbuff, d.recvbuff, d.count, d.type, d.op, rc, d.stream);
    case OpKind::kAllGather: return call_real(fn, rn->AllGather, d.sendbuff, d.recvbuff, d.count, d.type, rc, d.stream);
    case OpKind::kReduceScatter:
      return call_real(fn, rn->ReduceScatter, d.sendbuff, d.recvbuff, d.count, d.type, d.op, rc, d.stream);
    case OpKind::kAllToAll: return call_real(fn, rn->AlltoAll, d.sendbuff, d.recvbuff, d.count, d.type, rc, d.stream);
    case OpKind::kBroadcast:
      return call_real(fn, rn->Broadcast, d.sendbuff, d.recvbuff, d.count, d.type, d.root, rc, d.stream);
    case OpKind::kReduce:
      return call_real(fn, rn->Reduce, d.sendbuff, d.recvbuff, d.count, d.type, d.op, d.root, rc, d.stream);
    case OpKind::kGather: return call_real(fn, rn->Gather, d.sendbuff, d.recvbuff, d.count, d.type, d.root, rc, d.stream);
    case OpKind::kScatter:
      return call_real(fn, rn->Scatter, d.sendbuff, d.recvbuff, d.count, d.type, d.root, rc, d.stream);
    case OpKind::kSend: return call_real(fn, rn->Send, d.sendbuff, d.count, d.type, d.root, rc, d.stream);
    case OpKind::kRecv: return call_real(fn, rn->Recv, d.recvbuff, d.count, d.type, d.root, rc, d.stream);
    case OpKind::kPutSignal:
      return call_real(fn, rn->PutSignal, d.sendbuff, d.count, d.type, d.root, d.rma->peer_win, d.rma->peer_win_offset,
                       d.rma->sig_idx, d.rma->ctx, d.rma->flags, rc, d.stream);
    case OpKind::kSignal:
      return call_real(fn, rn->Signal, d.root, d.rma->sig_idx, d.rma->ctx, d.rma->flags, rc, d.stream);
    case OpKind::kWaitSignal: {
      // The real NCCL takes a non-const array; it gets a copy, not the descriptor's.
      std::vector<ncclWaitSignalDesc_t> waits = d.rma->waits;
      return call_real(fn, rn->WaitSignal, static_cast<int>(waits.size()), waits.empty() ? nullptr : waits.data(),
                       rc, d.stream);
    }
    case OpKind::kAllGatherV:
    case OpKind::kReduceScatterV:
    case OpKind::kAllToAllV:
      break;  // Purlin's own: the router never forwards them
  }
  return fail(ncclInternalError, fn, "unknown operation kind %d", static_cast<int>(d.kind));
}

}  // namespace purlin::shim
