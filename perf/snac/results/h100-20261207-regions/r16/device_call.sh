#!/usr/bin/env bash
# device call 2: A/B b27 (HEAD), b28 (lane-parallel region setup), b29 (b28 + own tables looked up once), compare b29 vs NCCL 2.32.3,
# traces, the GPU ctest suite on b29, packet/peer stand-ins, a short memcheck
R=$PWD; O=$OUT/r16; mkdir -p $O; T0=$(date +%s); BUDGET=${1:-560}
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main; [ -e /work/main/build ] || ln -s $R/.device/b29 /work/main/build
for b in b27 b28; do xz -d $R/.device/$b/nccl_shim/libnccl.so.2.32.3.xz; done
B=/work/main/build; export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
lab() { for i in 1 2 3; do for b in b27 b28 b29; do LD_PRELOAD=$R/.device/$b/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/lab_${b}_$i --ranks 8 --min 1K --max 64K --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll || return 1; done; done; }
trace() { for c in AllGather Broadcast AllToAll; do mkdir -p $O/trace/$c; PURLIN_TRACE_FILE=$O/trace/$c/t LD_PRELOAD=$B/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/trace/$c --ranks 8 --min 8K --max 8K --collectives $c --no-check || return 1; done; /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $O/trace/AllGather $O/trace/Broadcast $O/trace/AllToAll > $O/trace/summary.txt; }
xover() { for x in 4096 16384 65536; do PURLIN_LATENCY_MAX_BYTES=$x LD_PRELOAD=$B/nccl_shim/libnccl.so.2 $B/perf/snac/snac_bench $O/xover_$x --ranks 8 --min 1K --max 1M --collectives Broadcast,Reduce,ReduceScatter,AllReduce,AllGather || return 1; done; }
export R O B; export -f lab trace xover
step lab 240 lab
step trace 40 trace
PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll" step compare 200 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
step native 150 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*/W8_*:Native/Matrix.*/W2_*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
step xover 90 xover
step packet 30 $B/perf/snac/packet_latency $O/packet
step peer 60 $B/perf/atom/atom_bench $O/atom peer
left=$(( BUDGET - ($(date +%s)-T0) - 60 )); [ $left -gt 300 ] && left=300; [ $left -lt 10 ] && left=10
(cd $B && step ctest $left ctest -L gpu --timeout 150 -j1 --output-on-failure)
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" $O/ctest.log | head -20
SANITIZE_TOOLS=memcheck SANITIZE_TIMEOUT=40 SANITIZE_FILTER='Soak.LatencyPacketsChangingData:Native/Matrix.*/W4_AllGather' step san 45 bash tests/integration/run_sanitizers.sh $B $O/san
tail -3 $O/packet.log $O/peer.log $O/san.log; cat $O/steps.txt; sed -n '/ratio\|speedup/,+14p' $O/compare/summary.md | head -30
tar czf $OUT/r16.tgz -C $OUT r16
