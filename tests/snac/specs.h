// The eleven collectives' semantics for the host tests, written out from NCCL's definitions with
// plain index arithmetic: which element of which rank's input lands where. Nothing here calls
// the layout layer's relations (source, notifies, region), only its shape constructors, which
// are the API the runtime will use to describe a call.
#pragma once

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "harness.h"
#include "layout/collectives.h"

namespace purlin::snac::test {

namespace L = purlin::layout;

// ---- Fixed partition counts ---------------------------------------------------------------

template <class E>
Spec<L::AllGather, E> all_gather(int n, std::size_t c) {
  Spec<L::AllGather, E> s;
  s.ranks = n;
  s.in_elems = [=](int) { return c; };
  s.out_elems = [=](int) { return c * n; };
  s.args = [=](int) {
    Args<L::AllGather, E> a;
    a.in_shape = a.out_shape = L::FixedShape::uniform(c, n);
    return a;
  };
  s.in_place = [=](int r) { return std::optional<InPlace>({false, c * r}); };
  s.expect = [=](int, const auto& in, const Expected<E>& out) {
    for (int k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < c; ++i) out.set(k * c + i, in[k][i]);
    }
  };
  return s;
}

template <class E, class Op>
Spec<L::ReduceScatter, E, Op> reduce_scatter(int n, std::size_t c) {
  Spec<L::ReduceScatter, E, Op> s;
  s.ranks = n;
  s.in_elems = [=](int) { return c * n; };
  s.out_elems = [=](int) { return c; };
  s.args = [=](int) {
    Args<L::ReduceScatter, E> a;
    a.in_shape = a.out_shape = L::FixedShape::uniform(c, n);
    return a;
  };
  s.in_place = [=](int r) { return std::optional<InPlace>({true, c * r}); };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < c; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) xs.push_back(in[j][r * c + i]);
      out.set(i, ref_reduce<E, Op>(xs));
    }
  };
  return s;
}

template <class E>
Spec<L::AllToAll, E> all_to_all(int n, std::size_t c) {
  Spec<L::AllToAll, E> s;
  s.ranks = n;
  s.in_elems = [=](int) { return c * n; };
  s.out_elems = [=](int) { return c * n; };
  s.args = [=](int) {
    Args<L::AllToAll, E> a;
    a.in_shape = a.out_shape = L::FixedShape::uniform(c, n);
    return a;
  };
  s.in_place = [](int) { return std::optional<InPlace>({false, 0}); };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (int k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < c; ++i) out.set(k * c + i, in[k][r * c + i]);
    }
  };
  return s;
}

template <class E>
Spec<L::Gather, E> gather(int n, std::size_t c, int root) {
  Spec<L::Gather, E> s;
  s.ranks = n;
  s.in_elems = [=](int) { return c; };
  s.out_elems = [=](int) { return c * n; };
  s.args = [=](int) {
    Args<L::Gather, E> a;
    a.in_shape = a.out_shape = L::FixedShape::uniform(c, n);
    a.root = root;
    return a;
  };
  s.in_place = [=](int r) {
    return r == root ? std::optional<InPlace>({false, c * r}) : std::nullopt;
  };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    if (r != root) return;  // a non-root's receive buffer is not touched
    for (int k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < c; ++i) out.set(k * c + i, in[k][i]);
    }
  };
  return s;
}

template <class E>
Spec<L::Scatter, E> scatter(int n, std::size_t c, int root) {
  Spec<L::Scatter, E> s;
  s.ranks = n;
  s.in_elems = [=](int) { return c * n; };
  s.out_elems = [=](int) { return c; };
  s.args = [=](int) {
    Args<L::Scatter, E> a;
    a.in_shape = a.out_shape = L::FixedShape::uniform(c, n);
    a.root = root;
    return a;
  };
  s.in_place = [=](int r) {
    return r == root ? std::optional<InPlace>({true, c * r}) : std::nullopt;
  };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < c; ++i) out.set(i, in[root][r * c + i]);
  };
  return s;
}

// ---- Compositions: one total count, cut by whole_buffer_shape --------------------------------

// `around_root`: Reduce's root forms no partition, as the runtime cuts it where each rank's
// workers split by what it moves (snac::plans_rank_roles).
template <class C, class E, class Op = op::Sum>
Spec<C, E, Op> whole_buffer(int n, std::size_t total, int root, bool around_root = false) {
  Spec<C, E, Op> s;
  s.ranks = n;
  s.in_elems = [=](int) { return total; };
  s.out_elems = [=](int) { return total; };
  s.args = [=](int) {
    Args<C, E> a;
    // Partition starts on 16-byte multiples, as the runtime will cut them.
    a.in_shape = a.out_shape = L::whole_buffer_shape<C>(total, n, root, 16 / sizeof(E), around_root);
    a.root = root;
    return a;
  };
  s.in_place = [](int) { return std::optional<InPlace>({false, 0}); };
  return s;
}

template <class E, class Op>
Spec<L::AllReduce, E, Op> all_reduce(int n, std::size_t total) {
  auto s = whole_buffer<L::AllReduce, E, Op>(n, total, 0);
  s.expect = [=](int, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) xs.push_back(in[j][i]);
      out.set(i, ref_reduce<E, Op>(xs));
    }
  };
  return s;
}

template <class E>
Spec<L::Broadcast, E> broadcast(int n, std::size_t total, int root) {
  auto s = whole_buffer<L::Broadcast, E>(n, total, root);
  s.expect = [=](int, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < total; ++i) out.set(i, in[root][i]);
  };
  return s;
}

template <class E, class Op>
Spec<L::Reduce, E, Op> reduce(int n, std::size_t total, int root, bool around_root = false) {
  auto s = whole_buffer<L::Reduce, E, Op>(n, total, root, around_root);
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    if (r != root) return;
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) xs.push_back(in[j][i]);
      out.set(i, ref_reduce<E, Op>(xs));
    }
  };
  return s;
}

// PreMulSum: every rank scales its own contribution by its own scalar (NCCL's per-rank
// ncclRedOpCreatePreMulSum), the product rounded to the element type, then the sum. Different
// scalars per rank, so a protocol that applied one rank's scalar to every source would fail.
template <class E>
E premul_scalar(int rank) {
  return ref_narrow<E>(static_cast<RefAcc<E>>(1.5 + 0.25 * rank));
}

template <class E>
E ref_premultiply(E x, E scalar) {
  return ref_narrow<E>(ref_widen(x) * ref_widen(scalar));
}

template <class E>
Spec<L::AllReduce, E, op::PreMulSum> all_reduce_premul(int n, std::size_t total) {
  auto s = whole_buffer<L::AllReduce, E, op::PreMulSum>(n, total, 0);
  const auto args = s.args;
  s.args = [=](int r) {
    Args<L::AllReduce, E> a = args(r);
    a.op_arg.scalar = premul_scalar<E>(r);
    return a;
  };
  s.expect = [=](int, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) xs.push_back(ref_premultiply(in[j][i], premul_scalar<E>(j)));
      out.set(i, ref_reduce<E, op::Sum>(xs));
    }
  };
  return s;
}

template <class E>
Spec<L::ReduceScatter, E, op::PreMulSum> reduce_scatter_premul(int n, std::size_t c) {
  Spec<L::ReduceScatter, E, op::PreMulSum> s;
  const auto base = reduce_scatter<E, op::Sum>(n, c);
  s.ranks = n;
  s.in_elems = base.in_elems;
  s.out_elems = base.out_elems;
  s.in_place = base.in_place;
  s.args = [=](int r) {
    Args<L::ReduceScatter, E> a = base.args(r);
    a.op_arg.scalar = premul_scalar<E>(r);
    return a;
  };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < c; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) {
        xs.push_back(ref_premultiply(in[j][r * c + i], premul_scalar<E>(j)));
      }
      out.set(i, ref_reduce<E, op::Sum>(xs));
    }
  };
  return s;
}

// ---- V collectives: counts with zeros, displacements with gaps ----------------------------

// Counts with zeros; `gaps` adds unused elements between partitions (explicit displacements),
// otherwise the displacements pointer is null (partitions back to back).
struct VCounts {
  std::vector<std::size_t> counts;
  std::vector<std::size_t> displs;
  bool gaps = false;

  VCounts(int n, std::size_t scale, int seed, bool with_gaps) : gaps(with_gaps) {
    for (int k = 0; k < n; ++k) counts.push_back(((k * 7 + seed * 3) % 5) * scale);
    std::size_t at = 0;
    for (int k = 0; k < n; ++k) {
      at += gaps ? static_cast<std::size_t>(k % 3) : 0;
      displs.push_back(at);
      at += counts[static_cast<std::size_t>(k)];
    }
  }
  std::size_t extent() const { return displs.empty() ? 0 : displs.back() + counts.back(); }
  L::VariableShape shape() const {
    return {counts.data(), gaps ? displs.data() : nullptr, static_cast<int>(counts.size())};
  }
};

template <class E>
Spec<L::AllGatherV, E> all_gather_v(int n, std::size_t scale, int seed, bool gaps) {
  auto v = std::make_shared<VCounts>(n, scale, seed, gaps);
  Spec<L::AllGatherV, E> s;
  s.ranks = n;
  s.in_elems = [=](int r) { return v->counts[r]; };
  s.out_elems = [=](int) { return v->extent(); };
  s.args = [=](int) {
    Args<L::AllGatherV, E> a;
    a.in_shape = a.out_shape = v->shape();
    return a;
  };
  s.in_place = [=](int r) { return std::optional<InPlace>({false, v->displs[r]}); };
  s.expect = [=](int, const auto& in, const Expected<E>& out) {
    for (int k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < v->counts[k]; ++i) out.set(v->displs[k] + i, in[k][i]);
    }
  };
  return s;
}

template <class E, class Op>
Spec<L::ReduceScatterV, E, Op> reduce_scatter_v(int n, std::size_t scale, int seed, bool gaps) {
  auto v = std::make_shared<VCounts>(n, scale, seed, gaps);
  Spec<L::ReduceScatterV, E, Op> s;
  s.ranks = n;
  s.in_elems = [=](int) { return v->extent(); };
  s.out_elems = [=](int r) { return v->counts[r]; };
  s.args = [=](int) {
    Args<L::ReduceScatterV, E> a;
    a.in_shape = a.out_shape = v->shape();
    return a;
  };
  s.in_place = [=](int r) { return std::optional<InPlace>({true, v->displs[r]}); };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (std::size_t i = 0; i < v->counts[r]; ++i) {
      std::vector<E> xs;
      for (int j = 0; j < n; ++j) xs.push_back(in[j][v->displs[r] + i]);
      out.set(i, ref_reduce<E, Op>(xs));
    }
  };
  return s;
}

// AllToAllV: rank k sends send[k][r] elements to rank r; displacements are per rank. A
// symmetric matrix (send[k][r] == send[r][k]) gives every rank equal send and receive
// partitions, the only AllToAllV that has an in-place form.
struct VMatrix {
  int n;
  std::vector<std::vector<std::size_t>> send, sdispl, recv, rdispl;
  std::size_t max = 0;

  VMatrix(int ranks, std::size_t scale, int seed, bool symmetric)
      : n(ranks), send(n), sdispl(n), recv(n), rdispl(n) {
    for (int k = 0; k < n; ++k) {
      for (int r = 0; r < n; ++r) {
        const int mix = symmetric ? (k + r) * 3 : k * 3 + r * 5;
        send[k].push_back(((mix + seed) % 4) * scale + (k == r ? 1 : 0));
        max = std::max(max, send[k].back());
      }
    }
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < n; ++k) recv[r].push_back(send[k][r]);
    }
    // Displacements in reverse rank order with a one-element gap: not a prefix sum.
    for (int r = 0; r < n; ++r) {
      sdispl[r] = place(send[r]);
      rdispl[r] = place(recv[r]);
    }
  }
  static std::vector<std::size_t> place(const std::vector<std::size_t>& counts) {
    std::vector<std::size_t> d(counts.size());
    std::size_t at = 0;
    for (std::size_t k = counts.size(); k-- > 0;) {
      d[k] = at;
      at += counts[k] + 1;
    }
    return d;
  }
  static std::size_t extent(const std::vector<std::size_t>& c, const std::vector<std::size_t>& d) {
    std::size_t e = 0;
    for (std::size_t k = 0; k < c.size(); ++k) e = std::max(e, d[k] + c[k]);
    return e;
  }
};

template <class E>
Spec<L::AllToAllV, E> all_to_all_v(int n, std::size_t scale, int seed, bool symmetric = false) {
  auto m = std::make_shared<VMatrix>(n, scale, seed, symmetric);
  Spec<L::AllToAllV, E> s;
  s.ranks = n;
  s.in_elems = [=](int r) { return VMatrix::extent(m->send[r], m->sdispl[r]); };
  s.out_elems = [=](int r) { return VMatrix::extent(m->recv[r], m->rdispl[r]); };
  s.args = [=](int r) {
    Args<L::AllToAllV, E> a;
    a.in_shape = {m->send[r].data(), m->sdispl[r].data(), n};
    a.out_shape = {m->recv[r].data(), m->rdispl[r].data(), n};
    a.agreed_max_elems = m->max;
    return a;
  };
  s.in_place = [=](int) {
    return symmetric ? std::optional<InPlace>({false, 0}) : std::optional<InPlace>();
  };
  s.expect = [=](int r, const auto& in, const Expected<E>& out) {
    for (int k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < m->recv[r][k]; ++i) {
        out.set(m->rdispl[r][k] + i, in[k][m->sdispl[k][r] + i]);
      }
    }
  };
  return s;
}

}  // namespace purlin::snac::test
