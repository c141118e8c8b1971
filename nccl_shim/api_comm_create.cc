// Communicator creation entry points. All paths end in run_init (comm_init.h), submitted
// through the group machinery so that blocking, nonblocking and grouped creation share
// one implementation. Split, shrink and grow are Purlin's own too: a communicator is
// always Purlin's, whatever runs its collectives.
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "checks.h"
#include "comm_init.h"
#include "errors.h"
#include "export.h"
#include "forward.h"
#include "group.h"
#include "runtime/bootstrap/bootstrap.h"

namespace {

using namespace purlin::shim;  // NOLINT: this file is the shim's own C ABI surface
namespace rt = purlin::runtime;

ncclResult_t check_id(const char* fn, const ncclUniqueId& id) {
  if (!rt::unique_id_valid(id))
    return fail(ncclInvalidArgument, fn,
                "commId is not a Purlin unique id (it must come from ncclGetUniqueId of this library)");
  return ncclSuccess;
}

// Submits the init of `c` and, for a failed blocking init outside a group, frees it.
ncclResult_t start_init(const char* fn, ncclComm** out, ncclComm* c, InitJob job) {
  *out = c;
  ncclResult_t res = submit_init(fn, c, std::move(job));
  if (res != ncclSuccess && res != ncclInProgress && c->blocking && !in_group()) {
    discard_comm(c);
    *out = nullptr;
  }
  return res;
}

ncclResult_t init_rank(const char* fn, ncclComm_t* newcomm, int nranks, const ncclUniqueId& id, int rank,
                       const ncclConfig_t* config) {
  if (ncclResult_t r = check_ptr(fn, "newcomm", newcomm); r != ncclSuccess) return r;
  if (nranks < 1) return fail(ncclInvalidArgument, fn, "nranks %d must be at least 1", nranks);
  if (ncclResult_t r = check_rank(fn, "rank", rank, nranks); r != ncclSuccess) return r;
  if (ncclResult_t r = check_id(fn, id); r != ncclSuccess) return r;
  ncclComm* c = nullptr;
  if (ncclResult_t r = new_comm(fn, nranks, rank, current_device(), config, nullptr, &c); r != ncclSuccess)
    return r;
  return start_init(fn, newcomm, c, [c, id] { return run_init(c, id); });
}

struct SplitVote {
  int color;
  int key;
};

// Split: one allgather of (color, key) decides the new groups (ordered by key, then by
// parent rank, as in NCCL); a second allgather hands each group the unique id that its
// new rank 0 created.
ncclResult_t split_job(ncclComm* parent, ncclComm* child, int color, int key) {
  const int n = parent->nranks, me = parent->rank;
  rt::Bootstrap& boot = parent->core->bootstrap();
  std::vector<SplitVote> votes(n);
  votes[me] = {color, key};
  ncclResult_t res = boot.allgather(votes.data(), sizeof(SplitVote));
  std::vector<int> members;
  if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR) {
    for (int r = 0; r < n; ++r)
      if (votes[r].color == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return votes[a].key < votes[b].key; });
  }
  std::vector<ncclUniqueId> ids(n);
  std::memset(ids.data(), 0, sizeof(ncclUniqueId) * ids.size());
  if (res == ncclSuccess && !members.empty() && members[0] == me) res = rt::create_unique_id(&ids[me]);
  // Even a failed rank joins the exchange so that its peers are not left waiting.
  ncclResult_t ex = boot.allgather(ids.data(), sizeof(ncclUniqueId));
  if (res == ncclSuccess) res = ex;
  if (child == nullptr) return res;
  if (res != ncclSuccess) {
    child->state.store(res, std::memory_order_release);
    return res;
  }
  child->nranks = static_cast<int>(members.size());
  child->rank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  return run_init(child, ids[members[0]]);
}

constexpr int kShrinkTag = 0x5348524b;  // "SHRK"

// Shrink: excluded ranks may be dead, so nothing collective over the parent is used;
// the lowest surviving rank sends the new unique id to each survivor point to point.
ncclResult_t shrink_job(ncclComm* parent, ncclComm* child, std::vector<int> survivors) {
  rt::Bootstrap& boot = parent->core->bootstrap();
  const int me = parent->rank, leader = survivors[0];
  ncclUniqueId id{};
  ncclResult_t res = ncclSuccess;
  if (me == leader) {
    res = rt::create_unique_id(&id);
    for (size_t i = 1; i < survivors.size() && res == ncclSuccess; ++i)
      res = boot.send(survivors[i], kShrinkTag, &id, sizeof(id));
  } else {
    res = boot.recv(leader, kShrinkTag, &id, sizeof(id));
  }
  if (res != ncclSuccess) {
    child->state.store(res, std::memory_order_release);
    return res;
  }
  return run_init(child, id);
}

// Grow: the existing ranks keep their ranks and learn the id that the root (the one
// existing rank that passes it) got from ncclCommGetUniqueId, with one allgather over the
// parent; the new ranks got it from the application.
struct GrowVote {
  int has_id;
  ncclUniqueId id;
};

ncclResult_t grow_job(ncclComm* parent, ncclComm* child, GrowVote mine) {
  const int n = parent->nranks;
  std::vector<GrowVote> votes(n);
  std::memset(static_cast<void*>(votes.data()), 0, sizeof(GrowVote) * votes.size());
  votes[parent->rank] = mine;
  ncclResult_t res = parent->core->bootstrap().allgather(votes.data(), sizeof(GrowVote));
  int roots = 0, root = -1;
  for (int r = 0; r < n && res == ncclSuccess; ++r) {
    if (votes[r].has_id == 0) continue;
    ++roots;
    root = r;
  }
  // Every rank saw the same votes, so every rank fails alike.
  if (res == ncclSuccess && roots != 1)
    res = fail(ncclInvalidUsage, "ncclCommGrow",
               "%d existing ranks passed a uniqueId; exactly one (the root, which called ncclCommGetUniqueId) must",
               roots);
  if (res != ncclSuccess) {
    child->state.store(res, std::memory_order_release);
    return res;
  }
  return run_init(child, votes[root].id);
}

}  // namespace

extern "C" {

ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guarded("ncclGetUniqueId", [&] {
    if (ncclResult_t r = check_ptr("ncclGetUniqueId", "uniqueId", uniqueId); r != ncclSuccess) return r;
    return rt::create_unique_id(uniqueId);
  });
}

ncclResult_t pncclCommInitRank(ncclComm_t* newcomm, int nranks, ncclUniqueId commId, int rank) {
  return guarded("ncclCommInitRank",
                 [&] { return init_rank("ncclCommInitRank", newcomm, nranks, commId, rank, nullptr); });
}

ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config) {
  return guarded("ncclCommInitRankConfig",
                 [&] { return init_rank("ncclCommInitRankConfig", comm, nranks, commId, rank, config); });
}

// Scalable init exists to spread NCCL's rendezvous over several roots; Purlin's
// rendezvous is small, so every rank meets at the first id's root.
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config) {
  const char* fn = "ncclCommInitRankScalable";
  return guarded(fn, [&] {
    if (nId < 1) return fail(ncclInvalidArgument, fn, "nId %d must be at least 1", nId);
    if (ncclResult_t r = check_ptr(fn, "commIds", commIds); r != ncclSuccess) return r;
    for (int i = 1; i < nId; ++i)
      if (ncclResult_t r = check_id(fn, commIds[i]); r != ncclSuccess) return r;
    return init_rank(fn, newcomm, nranks, commIds[0], myrank, config);
  });
}

ncclResult_t pncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  const char* fn = "ncclCommInitAll";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ptr(fn, "comms", comms); r != ncclSuccess) return r;
    if (ndev < 1) return fail(ncclInvalidArgument, fn, "ndev %d must be at least 1", ndev);
    const int visible = gpu_count();  // 0: no GPU, device numbers cannot be checked
    for (int i = 0; i < ndev; ++i) {
      int dev = devlist ? devlist[i] : i;
      if (dev < 0 || (visible > 0 && dev >= visible))
        return fail(ncclInvalidArgument, fn, "devlist[%d]=%d is not a CUDA device (%d visible)", i, dev, visible);
    }
    // Every communicator exists before its group opens, and a failure inside the group still
    // closes it without the recorded inits: an exception leaving the group open would hand
    // the application's next ncclGroupEnd inits that wait for ranks that never come.
    std::vector<ncclComm*> made(ndev, nullptr);
    ncclUniqueId id;
    ncclResult_t res = contain_exceptions(fn, [&] {
      for (int i = 0; i < ndev; ++i) {
        if (ncclResult_t r = new_comm(fn, ndev, i, devlist ? devlist[i] : i, nullptr, nullptr, &made[i]);
            r != ncclSuccess)
          return r;
      }
      return rt::create_unique_id(&id);
    });
    if (res == ncclSuccess) {
      group_start();
      res = contain_exceptions(fn, [&] {
        for (ncclComm* c : made)
          if (ncclResult_t r = submit_init(fn, c, [c, id] { return run_init(c, id); }); r != ncclSuccess) return r;
        return ncclSuccess;
      });
      if (res != ncclSuccess)
        for (ncclComm* c : made) cancel_init(c);
      const ncclResult_t end = group_end(fn, nullptr);
      if (res == ncclSuccess) res = end;
    }
    for (int i = 0; i < ndev; ++i) {
      if (res != ncclSuccess && made[i] != nullptr) discard_comm(made[i]);
      comms[i] = res == ncclSuccess ? made[i] : nullptr;
    }
    return res;
  });
}

ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const char* fn = "ncclCommSplit";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "newcomm", newcomm); r != ncclSuccess) return r;
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
      return fail(ncclInvalidArgument, fn, "color %d must be >= 0 or NCCL_SPLIT_NOCOLOR", color);
    ncclComm* child = nullptr;
    if (color != NCCL_SPLIT_NOCOLOR) {
      if (ncclResult_t r = new_comm(fn, 0, 0, comm->cuda_device, config, comm, &child); r != ncclSuccess) return r;
    }
    *newcomm = child;
    ncclComm* parent = comm;
    InitJob job = [parent, child, color, key] { return split_job(parent, child, color, key); };
    if (child == nullptr) {
      // No new communicator, but the rank still takes part in the vote.
      if (in_group()) return submit_init(fn, parent, std::move(job));
      return job();
    }
    return start_init(fn, newcomm, child, std::move(job));
  });
}

ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                             ncclConfig_t* config, int shrinkFlags) {
  const char* fn = "ncclCommShrink";
  return guarded(fn, [&] {
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "newcomm", newcomm); r != ncclSuccess) return r;
    if (excludeRanksCount < 0 || excludeRanksCount >= comm->nranks)
      return fail(ncclInvalidArgument, fn, "excludeRanksCount %d must be in [0, %d)", excludeRanksCount,
                  comm->nranks);
    if (excludeRanksCount > 0 && excludeRanksList == nullptr)
      return fail(ncclInvalidArgument, fn, "excludeRanksList is NULL with excludeRanksCount %d", excludeRanksCount);
    if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
      return fail(ncclInvalidArgument, fn, "shrinkFlags 0x%x is not NCCL_SHRINK_DEFAULT or NCCL_SHRINK_ABORT",
                  shrinkFlags);
    std::vector<bool> excluded(comm->nranks, false);
    for (int i = 0; i < excludeRanksCount; ++i) {
      if (ncclResult_t r = check_rank(fn, "excludeRanksList[i]", excludeRanksList[i], comm->nranks); r != ncclSuccess)
        return r;
      excluded[excludeRanksList[i]] = true;
    }
    if (excluded[comm->rank])
      return fail(ncclInvalidUsage, fn, "the calling rank %d is in excludeRanksList", comm->rank);
    std::vector<int> survivors;
    for (int r = 0; r < comm->nranks; ++r)
      if (!excluded[r]) survivors.push_back(r);
    const int new_rank = static_cast<int>(std::find(survivors.begin(), survivors.end(), comm->rank) - survivors.begin());
    ncclComm* child = nullptr;
    if (ncclResult_t r = new_comm(fn, static_cast<int>(survivors.size()), new_rank, comm->cuda_device, config, comm,
                                  &child);
        r != ncclSuccess)
      return r;
    ncclComm* parent = comm;
    return start_init(fn, newcomm, child, [parent, child, survivors] { return shrink_job(parent, child, survivors); });
  });
}

// Grow's id is an ordinary Purlin unique id: its root runs in this process, the application
// hands the id to the new ranks, and ncclCommGrow hands it to the existing ones.
ncclResult_t pncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId) {
  const char* fn = "ncclCommGetUniqueId";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->CommGetUniqueId, rc, uniqueId);
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (ncclResult_t r = check_ptr(fn, "uniqueId", uniqueId); r != ncclSuccess) return r;
    return rt::create_unique_id(uniqueId);
  });
}

// Existing ranks: comm, rank -1, the root's uniqueId or NULL. New ranks: no comm, the id,
// their rank. Without a config the existing ranks' new communicator inherits the parent's.
ncclResult_t pncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  const char* fn = "ncclCommGrow";
  return guarded(fn, [&] {
    if (ncclComm_t rc = passthrough(comm); rc != nullptr)
      return call_real(fn, real_nccl()->CommGrow, rc, nRanks, uniqueId, rank, newcomm, config);
    if (ncclResult_t r = check_ptr(fn, "newcomm", newcomm); r != ncclSuccess) return r;
    *newcomm = nullptr;
    if (nRanks < 1) return fail(ncclInvalidArgument, fn, "nRanks %d must be at least 1", nRanks);
    if (comm == nullptr) {
      if (ncclResult_t r = check_ptr(fn, "uniqueId", uniqueId); r != ncclSuccess) return r;
      return init_rank(fn, newcomm, nRanks, *uniqueId, rank, config);
    }
    if (ncclResult_t r = check_ready(fn, comm); r != ncclSuccess) return r;
    if (rank != -1) return fail(ncclInvalidArgument, fn, "rank %d: existing ranks must pass -1", rank);
    if (nRanks <= comm->nranks)
      return fail(ncclInvalidArgument, fn, "nRanks %d must exceed the communicator's %d ranks", nRanks, comm->nranks);
    GrowVote mine{};
    if (uniqueId != nullptr) {
      if (ncclResult_t r = check_id(fn, *uniqueId); r != ncclSuccess) return r;
      mine.has_id = 1;
      mine.id = *uniqueId;
    }
    ncclComm* child = nullptr;
    if (ncclResult_t r = new_comm(fn, nRanks, comm->rank, comm->cuda_device, config, comm, &child); r != ncclSuccess)
      return r;
    ncclComm* parent = comm;
    return start_init(fn, newcomm, child, [parent, child, mine] { return grow_job(parent, child, mine); });
  });
}

ncclResult_t ncclGetUniqueId(ncclUniqueId*) PURLIN_WEAK_ALIAS_OF_P(ncclGetUniqueId);
ncclResult_t ncclCommGetUniqueId(ncclComm_t, ncclUniqueId*) PURLIN_WEAK_ALIAS_OF_P(ncclCommGetUniqueId);
ncclResult_t ncclCommGrow(ncclComm_t, int, const ncclUniqueId*, int, ncclComm_t*, ncclConfig_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclCommGrow);
ncclResult_t ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int) PURLIN_WEAK_ALIAS_OF_P(ncclCommInitRank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclCommInitRankConfig);
ncclResult_t ncclCommInitRankScalable(ncclComm_t*, int, int, int, ncclUniqueId*, ncclConfig_t*)
    PURLIN_WEAK_ALIAS_OF_P(ncclCommInitRankScalable);
ncclResult_t ncclCommInitAll(ncclComm_t*, int, const int*) PURLIN_WEAK_ALIAS_OF_P(ncclCommInitAll);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*) PURLIN_WEAK_ALIAS_OF_P(ncclCommSplit);
ncclResult_t ncclCommShrink(ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int)
    PURLIN_WEAK_ALIAS_OF_P(ncclCommShrink);

}  // extern "C"
