#!/usr/bin/env bash
# device call r22: the fixed team arrival (Engine::last_of_team) and point-to-point sequence
# numbers loaded by a lane group at once (PairEngine::run) -- b22 -- on one GPU: the native
# subset, b22 beside NCCL 2.32.3 (8 and 1 ranks), racecheck of the case that failed in r21.
R=$PWD; O=$OUT/r22; mkdir -p $O; T0=$(date +%s)
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main; rm -rf /work/main/build; ln -s $R/.device/b22 /work/main/build
B=/work/main/build; L=$B/nccl_shim/libnccl.so.2; 
export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
export R O B L
step native 120 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
COMPARE_RANKS="8 1" PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll" step compare 110 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
grep -A9 "^| collective" $O/compare/summary.md | head -11
left=$(( 560 - ($(date +%s)-T0) ))
SANITIZE_TOOLS=racecheck SANITIZE_TIMEOUT=$left SANITIZE_FILTER='Native/Matrix.*/W4_Reduce:Native/Matrix.*/W4_AllReduce' step san $((left+10)) bash tests/integration/run_sanitizers.sh $B $O/san
tail -3 $O/san.log; grep -c "Failure\|wrong" $O/san/racecheck.log
cat $O/steps.txt
tar czf $OUT/r22.tgz -C $OUT r22
