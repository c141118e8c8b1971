// Test hooks of libfake_nccl.so, a stand-in for the real libnccl.so.2 that needs no GPU.
//
// Every NCCL entry point (ncclX and pncclX) appends one line to an in-process log:
//   "<Name> key=value key=value ... result=<n>"
// Name is the function without its prefix ("AllReduce"); pointers are 0x-hex, integers
// decimal, strings percent-encoded (space, '%', '=' and non-printables as %XX), "null"
// for a null string. Values behind pointers appear as <param>.<field> ("config.minCTAs")
// or <param>[i] for arrays. The exact keys of each function are in its definition.
//
// ncclResult_t entry points return, in order of precedence: the result set for that name
// with fake_nccl_set_result, the one set for "*", the integer in FAKE_NCCL_RESULT (read at
// every call), ncclSuccess. A call naming a communicator the fake did not create fails
// with ncclInvalidArgument whatever is configured, and logs comm_known=0: a forwarding
// bug that leaks Purlin's handle into the real library shows up as that.
//
// Tests reach these through dlopen(<path of libfake_nccl.so>, RTLD_NOW | RTLD_NOLOAD)
// and dlsym, because the shim under test loaded the library privately (RTLD_LOCAL).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// The version ncclGetVersion reports: distinct from every real NCCL release. Two builds of
// the fake exist: libfake_nccl.so has every entry point of NCCL 2.32.3, libfake_nccl_228.so
// only those of NCCL 2.28 (a real NCCL older than the functions Purlin exports).
#define FAKE_NCCL_VERSION 23299
#define FAKE_NCCL_228_VERSION 22899

// Number of calls logged since the last reset.
int fake_nccl_call_count(void);
// The i-th logged call (0-based), or null when out of range. Valid until the next reset.
const char* fake_nccl_call(int i);
// Clears the log and every result set with fake_nccl_set_result.
void fake_nccl_reset(void);
// Makes entry point `name` ("AllReduce"; "*" for all) return `result`; -1 removes the setting.
void fake_nccl_set_result(const char* name, int result);

#ifdef __cplusplus
}  // extern "C"
#endif
