#!/usr/bin/env bash
# device call 3: one-hop crossover at mid sizes (b29), default runs before and after
R=$PWD; O=$OUT/r17; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader | tee $O/env.txt
export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
B=$R/.device/b29; L=$B/nccl_shim/libnccl.so.2
run() { local name=$1; shift; env "$@" LD_PRELOAD=$L timeout 40 $B/perf/snac/snac_bench $O/$name --ranks 8 --min 16K --max 256K --collectives Broadcast,Reduce,ReduceScatter,AllReduce,AllGather >$O/$name.log 2>&1; echo "$name rc=$? $*"; }
run base1
run oh32k PURLIN_ONE_HOP_MAX_BYTES=32768
run oh0 PURLIN_ONE_HOP_MAX_BYTES=0
run oh128k PURLIN_ONE_HOP_MAX_BYTES=131072
run base2
tar czf $OUT/r17.tgz -C $OUT r17
