// The SNAC kernel: one CTA per worker of the plan, the Atom of the architecture being compiled
// (atom::NativeAtom), the engine of engine.h. The launch bridge (src/launch) instantiates it
// from one list (collective, element type, op) and launches
//
//   snac_kernel<C, E, Op, Cfg, Shapes><<<plan.workers(), Cfg::threads,
//                                        kernel_smem_bytes(workspace, ranks), stream>>>(
//       handle, plan, args, control, shapes);
//
// with every CTA co-resident (the policy's job), since workers wait on each other. `workspace`
// (at most Cfg::workspace_bytes, a multiple of 128) is what the device's shared memory per block
// allows (launch/kernel_smem.h); the kernel takes whatever it was launched with.
#pragma once

#include <cstddef>

#include "atom/atom.cuh"
#include "atom/config.h"
#include "atom/ptx/memory.cuh"
#include "layout/host_device.h"
#include "snac/backend.h"
#include "snac/device_backend.cuh"
#include "snac/engine.h"
#include "snac/plan.h"

namespace purlin::snac {

// Dynamic shared memory per CTA: the Atom's workspace, then the reduction's source table.
PURLIN_HD constexpr std::size_t kernel_smem_bytes(std::size_t workspace, int ranks) {
  return workspace + source_table_bytes(ranks);
}

// Where the partition tables of a V collective's shapes live on the device. A VariableShape
// holds pointers; the launcher builds them over host arrays and passes the arrays themselves
// by value in `Shapes`, so that a launch needs no device allocation and a CUDA graph records
// the tables with the launch. attach(args) points the Args' shapes at the storage it is
// called on (here: the kernel's own parameter). Fixed-shape collectives pass an empty storage
// with no attach, so their parameter block stays small and their args are read in place.
template <class S, class C, class E>
concept ShapeStorage = requires(const S& s, Args<C, E>& a) { s.attach(a); };

template <class C, class E, class Op, class Cfg, class Shapes>
__global__ void __launch_bounds__(Cfg::threads, 1)
    snac_kernel(const __grid_constant__ Handle handle, const __grid_constant__ Plan plan,
                const __grid_constant__ Args<C, E> args, DeviceControl control,
                const __grid_constant__ Shapes shapes) {
  extern __shared__ __align__(128) unsigned char smem[];
  // __grid_constant__ makes taking a parameter's address legal: the engine holds references to
  // the handle, plan and args, and without it every thread would copy them into its local
  // memory and read them back from there (through an L1 that a throughput kernel's shared memory
  // leaves small). A V collective's args are the exception, copied so that attach() can point
  // them at the tables; the control stays a copy too: nvcc 13.0 crashes compiling these kernels
  // with a __grid_constant__ DeviceControl.
  if (threadIdx.x == 0 && control.started != nullptr) {
    static_cast<volatile Epoch*>(control.started)[blockIdx.x] = handle.epochs[blockIdx.x] + 1;
  }
  // The launch's size is the one record of the workspace it chose, so the kernel reads it back
  // rather than being told twice.
  const std::size_t workspace = atom::ptx::dynamic_smem_bytes() - source_table_bytes(handle.ranks);
  auto** table = reinterpret_cast<const void**>(smem + workspace);
  DeviceWatch watch;
  const DeviceBackend<atom::NativeAtom<Cfg>> be(atom::Workspace{smem, workspace}, table, control, watch);
  Status s = Status::ok;
  if constexpr (ShapeStorage<Shapes, C, E>) {
    Args<C, E> attached = args;
    shapes.attach(attached);
    s = run<C, E, Op>(be, handle, plan, attached);
  } else {
    s = run<C, E, Op>(be, handle, plan, args);
  }
  if (s != Status::ok && threadIdx.x == 0 && control.status != nullptr) {
    atomicCAS(control.status, 0u, static_cast<unsigned>(s));
  }
}

}  // namespace purlin::snac
