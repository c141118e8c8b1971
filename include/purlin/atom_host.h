// Purlin host Atom: the Atom interface (see purlin/atom.cuh) for plain C++ host code.
//
//   purlin::atom::HostAtom<Cfg>::copy(dst, src, bytes, workspace);
//   purlin::atom::HostAtom<Cfg>::reduce<E, Op>(dst, sources, n, bytes, workspace, arg);
//
// It lets code written against the Atom (Purlin's SNAC orchestration, or yours) run on CPU threads,
// one thread standing in for one CTA: no GPU needed, ThreadSanitizer-friendly. Results are bitwise
// identical to the GPU Atoms' (same types, ops, rounding and accumulation order). The call is
// synchronous; `workspace` is Cfg::workspace_bytes of 16-byte aligned memory private to the calling
// thread, or nullptr for a thread-local buffer. Same alignment and size rules as the GPU Atoms.
//
// Compiles with any C++20 host compiler given the CUDA toolkit's include directory (for the
// __half / __nv_bfloat16 / __nv_fp8 types); link `purlin_atom`.
#pragma once

#include "atom/config.h"
#include "atom/host_atom.h"
#include "atom/plan.h"
#include "atom/types.h"
