// The execution context the shared Atom algorithms are written against. The GPU provides one
// (DeviceExec, device_exec.cuh: a CTA, cp.async, shared memory); the host Atom provides another
// (HostExec: one thread, synchronous memcpy). Keeping the algorithms generic over it means the host
// tests run the very chunking, windowing and realignment code that the GPU runs.
//
// An Exec provides:
//   static constexpr int threads;   using Smem (workspace address type);   int tid() const;
//   void sync() const;                                 barrier over all `threads`
//   Pack ldg16(uintptr_t) / void stg16(uintptr_t, Pack)   aligned 16-byte global access
//   Pack lds16(Smem) / void sts16(Smem, Pack)             aligned 16-byte workspace access
//   void fetch16(Smem, uintptr_t)                         global -> workspace, may be asynchronous
//   void commit() / template <int N> void wait_prior()    close a fetch group / wait until at most
//                                                         N groups are pending
#pragma once

#include "atom/pack.h"

#include <cstdint>
#include <cstring>

namespace purlin::atom {

struct HostExec {
  using Smem = std::uintptr_t;
  static constexpr int threads = 1;
  // __host__ __device__ only so that nvcc accepts the shared templates instantiated with it; it
  // is meant for host code.
  __host__ __device__ int tid() const { return 0; }
  __host__ __device__ void sync() const {}
  __host__ __device__ Pack ldg16(std::uintptr_t g) const { return load(g); }
  __host__ __device__ void stg16(std::uintptr_t g, const Pack& v) const { store(g, v); }
  __host__ __device__ Pack lds16(Smem a) const { return load(a); }
  __host__ __device__ void sts16(Smem a, const Pack& v) const { store(a, v); }
  __host__ __device__ void fetch16(Smem a, std::uintptr_t g) const { store(a, load(g)); }
  __host__ __device__ void commit() const {}
  template <int N>
  __host__ __device__ void wait_prior() const {}

 private:
  __host__ __device__ static Pack load(std::uintptr_t a) {
    Pack v;
    std::memcpy(&v, reinterpret_cast<const void*>(a), sizeof(v));
    return v;
  }
  __host__ __device__ static void store(std::uintptr_t a, const Pack& v) {
    std::memcpy(reinterpret_cast<void*>(a), &v, sizeof(v));
  }
};

}  // namespace purlin::atom
