/*
 * Purlin's own entry points, exported by Purlin's libnccl.so.2 next to the NCCL 2.32 ABI.
 *
 * They run on a communicator created through the NCCL API (ncclCommInitRank and friends) and
 * follow NCCL's conventions: counts in elements of `datatype`, enqueued on `stream`, legal
 * inside ncclGroupStart/End and CUDA graph capture, and every rank of the communicator must
 * make the same calls in the same order. Host arrays are read before the call returns.
 *
 * They need the native (Purlin kernel) path: a communicator whose ranks are all on one host
 * with a GPU each. Otherwise they fail with ncclInvalidUsage; purlinCommIsNative tells.
 */
#ifndef PURLIN_PURLIN_H_
#define PURLIN_PURLIN_H_

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *native = 1 when collectives on `comm` run on Purlin's kernels, 0 when forwarded to NCCL. */
ncclResult_t purlinCommIsNative(ncclComm_t comm, int* native);

/* AllGatherV: rank k contributes recvcounts[k] elements (sendcount must equal
 * recvcounts[rank]); they land at recvbuff + displs[k] on every rank (displs == NULL: back to
 * back in rank order). recvcounts and displs must be identical on every rank; zeros allowed.
 * In place when sendbuff == recvbuff + displs[rank]. */
ncclResult_t purlinAllGatherV(const void* sendbuff, size_t sendcount, void* recvbuff,
                              const size_t* recvcounts, const size_t* displs,
                              ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);

/* ReduceScatterV: partition k of every rank's sendbuff (sendcounts[k] elements at
 * sendbuff + displs[k]; displs == NULL: back to back) is reduced into rank k's recvbuff
 * (recvcount must equal sendcounts[rank]). sendcounts and displs must be identical on every
 * rank. In place when recvbuff == sendbuff + displs[rank]. */
ncclResult_t purlinReduceScatterV(const void* sendbuff, const size_t* sendcounts,
                                  const size_t* displs, void* recvbuff, size_t recvcount,
                                  ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                  cudaStream_t stream);

/* AllToAllV: this rank sends sendcounts[k] elements from sendbuff + sdispls[k] to rank k and
 * receives recvcounts[k] elements from rank k at recvbuff + rdispls[k] (NULL displacements:
 * back to back). recvcounts[k] on this rank must equal sendcounts[rank] on rank k. maxcount
 * is the largest sendcounts entry over all ranks, the same value on every rank (it lets every
 * rank advance its protocol state identically without a host synchronization). In place
 * (sendbuff == recvbuff) each receive partition replaces the send partition of the same rank,
 * so recvcounts and rdispls must equal sendcounts and sdispls (ncclInvalidArgument otherwise). */
ncclResult_t purlinAllToAllV(const void* sendbuff, const size_t* sendcounts,
                             const size_t* sdispls, void* recvbuff, const size_t* recvcounts,
                             const size_t* rdispls, size_t maxcount, ncclDataType_t datatype,
                             ncclComm_t comm, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PURLIN_PURLIN_H_ */
