// The fake NCCL's shared state: the call log, configured results, and the handles it hands
// out (communicators, allocations), so that it can tell its own handles from foreign ones.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

// The fake's communicator. The real library keeps this type opaque; the fake defines it.
struct ncclComm {
  uint64_t magic;
  int nranks;
  int rank;
  int device;
  int serial;  // creation order, 1-based
};

namespace fake_nccl {

// One log line under construction. Entry points add their arguments, then commit().
class Call {
 public:
  explicit Call(const char* name);

  Call& num(const char* key, long long value);
  Call& ptr(const char* key, const void* value);
  Call& str(const char* key, const char* value);
  // The 128 bytes of an id as a 64-bit FNV-1a digest in hex: equal ids log equal values.
  Call& id(const char* key, const ncclUniqueId& value);
  // Logs the handle and whether the fake created it; an unknown one makes commit() fail.
  Call& comm(const char* key, ncclComm_t value);
  // The fields of a config, those within config->size only; "null" when absent.
  Call& config(const char* key, const ncclConfig_t* value);
  // The same for a per-collective config (the ncclXConfig collectives).
  Call& coll_config(const char* key, const ncclCollConfig_t* value);

  // The result this call will return (see fake_nccl.h), fixed at construction.
  ncclResult_t result() const { return result_; }
  bool ok() const { return result_ == ncclSuccess || result_ == ncclInProgress; }

  // Appends the line ("... result=<n>") to the log and returns result().
  ncclResult_t commit();

 private:
  // Logs the pointer and, when it is not null, the size, magic and version fields.
  template <class T>
  bool versioned(const char* key, const T* c);

  std::string line_;
  ncclResult_t result_;
};

// New communicator, registered as the fake's own.
ncclComm_t new_comm(int nranks, int rank, int device);
// Unregisters and frees a communicator created by new_comm; false if it is not one.
bool delete_comm(ncclComm_t comm);
bool known_comm(ncclComm_t comm);

// Host memory standing in for device memory (ncclMemAlloc), remembered for ncclMemFree.
void* new_allocation(size_t bytes);
bool delete_allocation(void* p);

// A fresh, never dereferenced token (registration handles, windows, ids): distinctive
// values that let a test follow a handle from the fake through Purlin and back.
uintptr_t next_token();

}  // namespace fake_nccl
