#!/usr/bin/env bash
# device call 6 (r18): call 5 plus a latency-knob sweep (packet chunk, latency roles, spread) on b30
# native subset, racecheck/synccheck subset, then the GPU ctest tests 83-193 of -L gpu (#1158-1268) not run in r16
R=$PWD; O=$OUT/r18; mkdir -p $O; T0=$(date +%s); BUDGET=${1:-570}
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main; [ -e /work/main/build ] || ln -s $R/.device/b30 /work/main/build
xz -d $R/.device/b29s/nccl_shim/libnccl.so.2.32.3.xz
B=/work/main/build; export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
lab() { for i in 1 2 3; do for b in b29s b30; do LD_PRELOAD=$R/.device/$b/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/lab_${b}_$i --ranks 8 --min 1K --max 256K --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll || return 1; done; done; }
trace() { for cs in Broadcast:16K Broadcast:32K Broadcast:64K Broadcast:128K Reduce:32K Reduce:64K AllGather:8K AllGather:32K AllGather:64K AllReduce:32K AllReduce:64K ReduceScatter:64K; do c=${cs%:*}; s=${cs#*:}; d=$O/trace/${c}_$s; mkdir -p $d; PURLIN_TRACE_FILE=$d/t LD_PRELOAD=$B/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $d --ranks 8 --min $s --max $s --collectives $c --no-check || return 1; /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $d >> $O/trace/summary.txt; done; }
sweep() { d=$O/sweep; mkdir -p $d; L=$B/nccl_shim/libnccl.so.2; for v in base1 PURLIN_PACKET_CHUNK_BYTES=1024 PURLIN_PACKET_CHUNK_BYTES=2048 PURLIN_PACKET_CHUNK_BYTES=8192 PURLIN_LATENCY_ROLES=8,6,2 PURLIN_LATENCY_ROLES=12,2,2 PURLIN_LATENCY_ROLES=2,12,2 PURLIN_SPREAD_MIN_BYTES=4096 PURLIN_SPREAD_MIN_BYTES=16384 base2; do n=${v//[=,]/_}; case $v in base*) e=X=1;; *) e=$v;; esac; env $e LD_PRELOAD=$L timeout 30 $B/perf/snac/snac_bench $d/$n --ranks 8 --min 1K --max 512K --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll > $d/$n.log 2>&1; echo "$n rc=$?"; done; }
export R O B; export -f lab trace sweep
step lab 150 lab
step trace 80 trace
step sweep 90 sweep
step native 150 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*/W8_*:Native/Matrix.*/W2_*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
SANITIZE_TOOLS="racecheck synccheck" SANITIZE_TIMEOUT=45 SANITIZE_FILTER='Soak.LatencyPacketsChangingData:Native/Matrix.*/W4_Broadcast' step san 100 bash tests/integration/run_sanitizers.sh $B $O/san
left=$(( BUDGET - ($(date +%s)-T0) - 15 )); [ $left -lt 10 ] && left=10
(cd $B && step ctest $left ctest -L gpu -I 83,193 --timeout 200 -j3 --output-on-failure)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" $O/ctest.log | head -20
tail -3 $O/san.log; cat $O/steps.txt
tar czf $OUT/r18.tgz -C $OUT r18
