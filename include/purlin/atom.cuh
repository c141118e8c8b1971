// Purlin Atom: CTA-cooperative copy and reduce for use inside your own CUDA kernels.
//
// The Atom is the layer of Purlin that knows how bytes move on a given GPU generation; Purlin's
// collectives are built on it, and so can your kernels. Link the CMake target `purlin_atom`
// (header-only) and include this header from CUDA sources.
//
// ---------------------------------------------------------------------------------------------
// Interface
//
//   namespace purlin::atom
//
//   template <class Cfg> struct NativeAtom;          // the Atom of the GPU being compiled for
//   template <class Arch, class Cfg> using Atom;     // explicit: arch::Sm70, Sm80, Sm90, Sm100
//   GenericVector<Cfg>, Sm80Pipeline<Cfg>, Sm90Bulk<Cfg, BulkStore>   // the datapaths themselves
//
//   A::copy(void* dst, const void* src, size_t bytes, void* workspace);
//   A::reduce<E, Op>(void* dst, const void* const* sources, int n, size_t bytes, void* workspace,
//                    OpArg<E> arg = {});
//   (either with Workspace{base, bytes} in place of void* workspace: a smaller workspace)
//
//   Cfg = Config<Threads, Stages, StageBytes, Unroll>   (DefaultConfig = <256, 8, 16384, 4>)
//   A::workspace_bytes == Cfg::workspace_bytes == 128 + Stages * StageBytes
//
// copy moves `bytes` from src to dst. reduce writes to dst, element by element, the reduction of
// the n sources under Op, reading each source as an array of E.
//
// ---------------------------------------------------------------------------------------------
// Threading contract
//
// - A CTA-wide collective call: every thread of the block calls it with the same arguments, from
//   converged control flow. It executes __syncthreads() internally, like any block barrier.
// - The block is one-dimensional with exactly Cfg::threads threads (blockDim.x == Cfg::threads).
//   Declare the kernel __launch_bounds__(Cfg::threads, 1) so the compiler may use the registers
//   the register path is tuned for.
// - One call covers one contiguous range with one CTA. To spread a range over a grid, give each
//   CTA a share, e.g. with slice(bytes, gridDim.x, blockIdx.x) (16-byte grain, which keeps every
//   share's alignment and element boundaries). Results do not depend on how the range is split.
// - On return this CTA's stores are issued and the workspace is free again; they are ordered for
//   other threads of the CTA after a __syncthreads(), for other CTAs or GPUs only after the fence
//   your protocol requires (e.g. __threadfence() or a release store).
//
// ---------------------------------------------------------------------------------------------
// Memory and alignment
//
// - dst and sources are global memory (device, managed, or peer-mapped over NVLink). The sources
//   array itself may live in any memory the threads can read; it is read once per chunk.
// - Any byte count (0, 1, odd, huge) and any alignment of dst and of each source, independently.
//   Nothing is dropped. Cost: the body is vectorized in 16-byte packs aligned on dst; a source
//   whose address differs from dst's mod 16 is realigned with two aligned loads and four funnel
//   shifts per pack (the second load hits L1 or shared memory, so no extra DRAM/NVLink traffic);
//   up to 15 bytes at each end go element by element. A dst that is not aligned to sizeof(E)
//   (reduce only) runs entirely element by element, at a fraction of the bandwidth.
// - When every source agrees with dst mod 16, each thread of the cp.async pipeline only reads
//   what it fetched itself and the pipeline runs without a CTA barrier per chunk; realignment
//   needs one barrier per chunk.
// - Reads never leave [src, src + bytes): blocks that straddle a range boundary are assembled
//   byte by byte.
// - dst may equal a source exactly (in place); any other overlap is undefined.
// - reduce: bytes must be a multiple of sizeof(E); n >= 1. Up to 16 sources take the pipelined
//   path; more take the register path (same results).
//
// ---------------------------------------------------------------------------------------------
// Workspace
//
// `workspace` is CTA shared memory of Cfg::workspace_bytes, 128-byte aligned, e.g.
//   extern __shared__ __align__(128) unsigned char ws[];   // launch with workspace_bytes
// Above 48 KiB, raise cudaFuncAttributeMaxDynamicSharedMemorySize. GenericVector does not touch
// it (nullptr is fine); the other Atoms use all of it for the duration of the call only.
// Where the GPU's per-block limit is smaller, pass Workspace{ws, bytes} with what you have: the
// pipeline keeps its Stages and shrinks each slot to Cfg::stage_bytes_within(bytes) (128-byte
// multiples); below 128 + Stages * 256 bytes every call takes the register path.
//
// ---------------------------------------------------------------------------------------------
// Types and ops (compile-time template parameters)
//
// E: int8_t, uint8_t, int32_t, uint32_t, int64_t, uint64_t, __half, float, double, __nv_bfloat16,
//    __nv_fp8_e4m3, __nv_fp8_e5m2 (ElementTypes, in ncclDataType_t order).
// Op: op::Sum, op::Prod, op::Max, op::Min, op::Avg, op::PreMulSum (ReduceOps).
// - Contributions are combined in ascending source order, one element at a time, on every path:
//   the result is bitwise identical for any CTA count, Atom, and configuration.
// - 8- and 16-bit floats accumulate in fp32 and are rounded once (round to nearest even; fp8
//   saturates to the largest finite value); fp32 accumulates in fp32, fp64 in fp64; integers wrap
//   modulo 2^bits as in NCCL. Max/Min on floats ignore a NaN operand (fmax/fmin).
// - Avg: sum, then divide by n. Integers: the wrapped sum divided by n (truncating toward zero).
//   Floats: the sum multiplied by 1/n in the accumulation type, then rounded once. (NCCL
//   pre-multiplies each float contribution by 1/n; results can differ in the last bit.)
// - PreMulSum: sum of source_i * scalar, scalar of type E; arg.scalar (host-resident: by value) or
//   *arg.scalar_ptr (device-resident: read by each thread when the call starts).
//
// ---------------------------------------------------------------------------------------------
// Example
//
//   using A = purlin::atom::NativeAtom<purlin::atom::DefaultConfig>;
//   __global__ void __launch_bounds__(A::threads, 1)
//   sum3(__nv_bfloat16* out, const void* const* in, size_t bytes) {
//     extern __shared__ __align__(128) unsigned char ws[];
//     const auto part = purlin::atom::slice(bytes, gridDim.x, blockIdx.x);
//     __shared__ const void* src[3];
//     if (threadIdx.x < 3) src[threadIdx.x] = static_cast<const char*>(in[threadIdx.x]) + part.begin;
//     __syncthreads();
//     A::reduce<__nv_bfloat16, purlin::atom::op::Sum>(reinterpret_cast<char*>(out) + part.begin,
//                                                     src, 3, part.end - part.begin, ws);
//   }
//   // sum3<<<grid, A::threads, A::workspace_bytes>>>(out, in, bytes);
#pragma once

#include "atom/atom.cuh"
#include "atom/config.h"
#include "atom/plan.h"
#include "atom/types.h"
