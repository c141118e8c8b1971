// Helpers shared by the bootstrap tests: run a function as N ranks (threads or forked processes)
// with a bound on how long anything may take, and a workload that exercises every operation.
#pragma once

#include <nccl.h>

#include <chrono>
#include <functional>
#include <string>

#include "runtime/bootstrap/bootstrap.h"

namespace purlin::runtime::testing {

// Loopback only, and a timeout short enough that a hang fails the test instead of the CI job.
void use_loopback_env();

// A rank body returns "" on success, else what went wrong.
using RankBody = std::function<std::string(int rank)>;

// One thread per rank; returns every rank's error, one per line ("" if all succeeded).
std::string run_ranks_in_threads(int nranks, const RankBody& body);

// One forked child per rank (the caller creates the id first, so the root lives in this process).
// Children report through their exit status; any child still running after `limit` is killed.
std::string run_ranks_in_processes(int nranks, const RankBody& body, std::chrono::seconds limit);

// Rendezvous as `rank` and run exercise().
std::string join_and_exercise(const ncclUniqueId& id, int rank, int nranks);

// allgather (small and large), broadcast from every root, barriers, tagged send/recv received
// out of order, large simultaneous exchanges and zero-byte messages; checks every byte.
std::string exercise(Bootstrap& b);

}  // namespace purlin::runtime::testing
