#!/usr/bin/env bash
# device call r20: throughput items shared by teams (plan.h: share_items), A/B in one build by
# PURLIN_SHARE_ITEMS=0/1; traces of the cells it changes with both; a sweep of the throughput
# knobs under it; Purlin beside NCCL 2.32.3 (8 ranks sharing the GPU); the native GPU subset
R=$PWD; O=$OUT/r20; mkdir -p $O; T0=$(date +%s)
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main; [ -e /work/main/build ] || ln -s $R/.device/new /work/main/build
find $R/.device/new -name "*.xz" -exec xz -d {} \;
B=/work/main/build; L=$B/nccl_shim/libnccl.so.2; export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
C6=AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce
lab() { for i in 1 2; do for v in s0:PURLIN_SHARE_ITEMS=0 s1:X=1 t0:PURLIN_SPREAD_TEAMS=0; do env ${v#*:} LD_PRELOAD=$L $B/perf/snac/snac_bench $O/lab_${v%%:*}_$i --ranks 8 --min 1K --max 8M --collectives $C6 || return 1; done; done; }
trace() { for v in s0:PURLIN_SHARE_ITEMS=0 s1:X=1 t0:PURLIN_SPREAD_TEAMS=0; do for cs in ReduceScatter:64K ReduceScatter:256K Reduce:256K Broadcast:256K AllReduce:1M; do c=${cs%:*}; s=${cs#*:}; d=$O/trace/${v%%:*}_${c}_$s; mkdir -p $d; env ${v#*:} PURLIN_TRACE_FILE=$d/t LD_PRELOAD=$L $B/perf/snac/snac_bench $d --ranks 8 --min $s --max $s --collectives $c --no-check || return 1; /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $d >> $O/trace/summary_${v%%:*}.txt; done; done; }
sweep() { d=$O/sweep; mkdir -p $d; for tv in base:X=1 sp256k:PURLIN_SPREAD_MIN_BYTES=262144 sp16k:PURLIN_SPREAD_MIN_BYTES=16384 rr1m:PURLIN_RANK_ROLES_MIN_BYTES=1048576 rr4m:PURLIN_RANK_ROLES_MIN_BYTES=4194304 t0rr1m:PURLIN_SPREAD_TEAMS=0,PURLIN_RANK_ROLES_MIN_BYTES=1048576 t0ring8:PURLIN_SPREAD_TEAMS=0,PURLIN_RING_SLOTS=8 ring2:PURLIN_RING_SLOTS=2; do n=${tv%%:*}; env $(echo ${tv#*:} | tr , " ") LD_PRELOAD=$L timeout 30 $B/perf/snac/snac_bench $d/${n}_1 --ranks 8 --min 64K --max 16M --check-max 4M --collectives $C6 > $d/$n.log 2>&1; echo "$n rc=$?"; done; /opt/torch/.venv/bin/python3 perf/snac/ab_table.py $d/ base sp256k sp16k rr1m rr4m t0rr1m t0ring8 ring2 > $O/table_sweep.txt 2>&1; }
hop() { d=$O/hop; mkdir -p $d; for tv in base:X=1 oh0:PURLIN_ONE_HOP_MAX_BYTES=0 oh16k:PURLIN_ONE_HOP_MAX_BYTES=16384 oh32k:PURLIN_ONE_HOP_MAX_BYTES=32768; do n=${tv%%:*}; env ${tv#*:} LD_PRELOAD=$L timeout 20 $B/perf/snac/snac_bench $d/${n}_1 --ranks 8 --min 8K --max 128K --collectives AllReduce,Broadcast,Reduce > $d/$n.log 2>&1; echo "$n rc=$?"; done; /opt/torch/.venv/bin/python3 perf/snac/ab_table.py $d/ base oh0 oh16k oh32k > $O/table_hop.txt 2>&1; }
export R O B L C6; export -f lab trace sweep hop
step lab 140 lab
/opt/torch/.venv/bin/python3 perf/snac/ab_table.py $O/lab_ s0 s1 t0 > $O/table_lab.txt 2>&1; tail -9 $O/table_lab.txt
COMPARE_RANKS=8 PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives $C6,SendRecvAllToAll" step compare 110 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
grep -A10 "^| collective" $O/compare/summary.md | head -10
step trace 50 trace
step native 90 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*/W8_*:Native/Matrix.*/W2_*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
step hop 40 hop
left=$(( 575 - ($(date +%s)-T0) )); [ $left -lt 10 ] && left=10
step sweep $left sweep
cat $O/steps.txt
tar czf $OUT/r20.tgz -C $OUT r20
