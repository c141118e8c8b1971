// How one rank's grouped transfers become one PairLaunch (pairs.h): self transfers become
// copies, the rest are ordered by the key that makes the pair protocol deadlock-free (pairs.h,
// header comment), and each gets its workers. Host code, once per group per rank.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "snac/pairs.h"

namespace purlin::snac {

// Which workers move which transfer. Every transfer with chunks gets workers of its own while
// there are enough (so that a rank's sends and receives to all its peers progress at once, not
// one pair after another), extra ones in proportion to its chunks (a send or receive never more
// than the pair's slots, the chunks it can have in flight); with more transfers than workers,
// sends and copies share one part of the workers and receives the other, each transfer whole on
// the least loaded one, so that a receive never holds up a send queued behind it.
template <int N>
void assign_pair_workers(PairLaunch<N>& out, int max_workers, const PairHandle& h) {
  const std::uint32_t slots = h.slots;
  std::array<std::uint64_t, N> useful{};
  std::uint64_t total = 0;
  int active = 0;
  for (int i = 0; i < out.count; ++i) {
    PairOp& o = out.ops[i];
    const std::uint64_t c = op_chunks(h, o);
    useful[static_cast<std::size_t>(i)] = o.direction == PairDirection::copy ? c : std::min<std::uint64_t>(c, slots);
    total += useful[static_cast<std::size_t>(i)];
    active += c > 0 ? 1 : 0;
    o.first_worker = 0;
    o.workers = 1;
  }
  const auto cap = static_cast<std::uint64_t>(std::max(max_workers, 1));
  if (active == 0) {
    out.workers = 1;
    return;
  }
  if (static_cast<std::uint64_t>(active) <= cap) {
    const std::uint64_t workers = std::min(cap, total);
    std::uint64_t spare = workers - static_cast<std::uint64_t>(active);
    std::array<std::uint64_t, N> k{};
    const std::uint64_t extra_room = total - static_cast<std::uint64_t>(active);
    std::uint64_t given = 0;
    for (int i = 0; i < out.count; ++i) {
      const std::uint64_t u = useful[static_cast<std::size_t>(i)];
      if (u == 0) continue;
      const std::uint64_t extra = extra_room == 0 ? 0 : spare * (u - 1) / extra_room;
      k[static_cast<std::size_t>(i)] = 1 + extra;
      given += extra;
    }
    // What rounding left, one by one to the transfers with the most room.
    for (std::uint64_t left = spare - given; left > 0; --left) {
      int best = -1;
      for (int i = 0; i < out.count; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        if (useful[ui] > k[ui] && (best < 0 || useful[ui] - k[ui] > useful[static_cast<std::size_t>(best)] - k[static_cast<std::size_t>(best)]))
          best = i;
      }
      if (best < 0) break;
      ++k[static_cast<std::size_t>(best)];
    }
    std::uint32_t next = 0;
    for (int i = 0; i < out.count; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      if (useful[ui] == 0) continue;
      out.ops[i].first_worker = next;
      out.ops[i].workers = static_cast<std::uint32_t>(k[ui]);
      next += static_cast<std::uint32_t>(k[ui]);
    }
    out.workers = static_cast<int>(next);
    return;
  }
  // More transfers than workers: sends (and copies) on workers [0, split), receives on the rest.
  std::uint64_t sending = 0;
  bool any_send = false;
  bool any_recv = false;
  for (int i = 0; i < out.count; ++i) {
    if (useful[static_cast<std::size_t>(i)] == 0) continue;
    const bool recv = out.ops[i].direction == PairDirection::recv;
    (recv ? any_recv : any_send) = true;
    if (!recv) sending += useful[static_cast<std::size_t>(i)];
  }
  std::uint64_t split = any_recv ? (cap * sending + total / 2) / total : cap;
  if (any_send) split = std::max<std::uint64_t>(split, 1);
  if (any_recv) split = std::min<std::uint64_t>(split, cap - 1);
  std::array<std::uint64_t, N> load{};
  for (int i = 0; i < out.count; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    if (useful[ui] == 0) continue;
    const bool recv = out.ops[i].direction == PairDirection::recv;
    const std::uint64_t lo = recv ? split : 0;
    const std::uint64_t hi = recv ? cap : split;
    std::uint64_t best = lo;
    for (std::uint64_t w = lo; w < hi; ++w)
      if (load[w] < load[best]) best = w;
    load[best] += op_chunks(h, out.ops[i]);
    out.ops[i].first_worker = static_cast<std::uint32_t>(best);
  }
  out.workers = static_cast<int>(cap);
}

// Orders `ops` (this rank's transfers, in the order the application issued them) into `out`:
// self transfers become copies (the k-th send to itself with the k-th receive from itself;
// none where both name the same buffer),
// then the rest by key (header comment); then assigns them workers (assign_pair_workers).
// `what` names a rejected argument.
template <int N>
Status make_pair_launch(const PairHandle& h, const PairOp* ops, int count, int max_workers, PairLaunch<N>& out,
                        const char** what) {
  const int rank = h.rank;
  const int ranks = h.ranks;
  *what = "";
  out.count = 0;
  if (count > N) {
    *what = "transfers: more sends and receives in one group on one communicator than a launch holds";
    return Status::bad_argument;
  }
  std::array<int, N> order{};
  int sends_to_self = 0;
  int recvs_from_self = 0;
  int rest = 0;
  for (int i = 0; i < count; ++i) {
    const PairOp& o = ops[i];
    if (o.peer < 0 || o.peer >= ranks || o.direction == PairDirection::copy) {
      *what = "peer";
      return Status::bad_argument;
    }
    if (o.peer == rank) {
      (o.direction == PairDirection::send ? sends_to_self : recvs_from_self) += 1;
    } else {
      order[static_cast<std::size_t>(rest++)] = i;
    }
  }
  if (sends_to_self != recvs_from_self) {
    *what = "peer: a send to this rank needs a receive from it in the same group, and the other way round";
    return Status::bad_argument;
  }
  // Copies first: they wait for nothing.
  for (int i = 0, r = 0; i < count; ++i) {
    if (ops[i].peer != rank || ops[i].direction != PairDirection::send) continue;
    while (ops[r].peer != rank || ops[r].direction != PairDirection::recv) ++r;  // exists: counts agree
    if (ops[r].bytes != ops[i].bytes) {
      *what = "count: a send to this rank and its receive move different byte counts";
      return Status::bad_argument;
    }
    // In place (the receive's buffer is the send's): nothing moves, as in NCCL, so no copy.
    if (ops[i].src != ops[r].dst) {
      out.ops[out.count++] = PairOp{ops[i].src, ops[r].dst, ops[i].bytes, rank, PairDirection::copy};
    }
    ++r;
  }
  auto key = [&](int i) {
    const PairOp& o = ops[i];
    const bool send = o.direction == PairDirection::send;
    const int sender = send ? rank : o.peer;
    const int receiver = send ? o.peer : rank;
    const int round = ((receiver - sender) % ranks + ranks) % ranks;
    return static_cast<std::uint64_t>(round) * static_cast<std::uint64_t>(ranks) +
           static_cast<std::uint64_t>(sender);
  };
  // Stable: a pair's transfers keep the application's order.
  std::stable_sort(order.begin(), order.begin() + rest, [&](int a, int b) { return key(a) < key(b); });
  for (int i = 0; i < rest; ++i) out.ops[out.count++] = ops[order[static_cast<std::size_t>(i)]];
  assign_pair_workers(out, max_workers, h);
  return Status::ok;
}

}  // namespace purlin::snac
