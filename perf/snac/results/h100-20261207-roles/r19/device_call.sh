#!/usr/bin/env bash
# device call 8 (r19): A/B main (b30s with PURLIN_LATENCY_ROLES=8,6,2: look-again and the 8,6,2 ceiling)
# vs b31 (that + rooted latency roles), traces of the rooted cells, b31 beside NCCL 2.32.3 (8 ranks), native subset
R=$PWD; O=$OUT/r19; mkdir -p $O
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main; [ -e /work/main/build ] || ln -s $R/.device/b31 /work/main/build
xz -d $R/.device/b30s/nccl_shim/libnccl.so.2.32.3.xz
B=/work/main/build; export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
C7=AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll
lab() { for i in 1 2; do PURLIN_LATENCY_ROLES=8,6,2 LD_PRELOAD=$R/.device/b30s/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/lab_main_$i --ranks 8 --min 1K --max 512K --collectives $C7 || return 1
  LD_PRELOAD=$B/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/lab_b31_$i --ranks 8 --min 1K --max 512K --collectives $C7 || return 1; done; }
trace() { for cs in Broadcast:64K Reduce:64K; do c=${cs%:*}; s=${cs#*:}; d=$O/trace/${c}_$s; mkdir -p $d; PURLIN_TRACE_FILE=$d/t LD_PRELOAD=$B/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $d --ranks 8 --min $s --max $s --collectives $c --no-check || return 1; /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $d >> $O/trace/summary.txt; done; }
export R O B C7; export -f lab trace
step lab 60 lab
step native 90 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*/W8_*:Native/Matrix.*/W2_*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
COMPARE_RANKS=8 PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives $C7" step compare 90 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
step trace 20 trace
cat $O/steps.txt; tail -12 $O/compare/summary.md
tar czf $OUT/r19.tgz -C $OUT r19
