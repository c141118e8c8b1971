#!/usr/bin/env bash
# device call r21: the tree (b21: share_items, and whole chunks for a single phase read in place)
# against r20's build with PURLIN_SHARE_ITEMS=0 (the kernels of main before this change, plus
# trace marks); b21 beside NCCL 2.32.3 (8 ranks and 1 rank as threads, 4 MPS processes);
# nccl-tests all_reduce_perf -g 1 on both; native GPU tests; memcheck and racecheck of the
# throughput teams; a trace of the zero-copy publication with pollers backing off
R=$PWD; O=$OUT/r21; mkdir -p $O; T0=$(date +%s)
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
mkdir -p /work/main /tmp/ref; [ -e /work/main/build ] || ln -s $R/.device/b21 /work/main/build
xz -dc $R/.device/ref/libnccl.so.2.xz > /tmp/ref/libnccl.so.2; xz -d $R/.device/new/nccl_shim/libnccl.so.2.32.3.xz $R/.device/nt/all_reduce_perf.xz
B=/work/main/build; L=$B/nccl_shim/libnccl.so.2; L20=$R/.device/new/nccl_shim/libnccl.so.2
export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
C6=AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce
lab() { for i in 1 2 3; do PURLIN_SHARE_ITEMS=0 LD_PRELOAD=$L20 $B/perf/snac/snac_bench $O/lab_main_$i --ranks 8 --min 1K --max 32M --collectives $C6 || return 1
  LD_PRELOAD=$L $B/perf/snac/snac_bench $O/lab_b21_$i --ranks 8 --min 1K --max 32M --collectives $C6 || return 1; done; }
nt() { for i in 1 2; do for lib in /tmp/ref/libnccl.so.2 $L; do n=$([ $lib = $L ] && echo purlin || echo nccl); LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} LD_PRELOAD=$lib timeout 60 $R/.device/nt/all_reduce_perf -g 1 -b 8 -e 64M -f 8 -d bfloat16 -w 20 -n 200 > $O/nt/${n}_$i.log 2>&1 || return 1; done; done
  /opt/torch/.venv/bin/python3 perf/snac/nccl_tests_table.py $O/nt/table.md $O/nt/nccl_*.log -- $O/nt/purlin_*.log; }
trace() { for v in base:X=1 backoff:PURLIN_POLL_BACKOFF_EVERY=16 nocheck:PURLIN_CHECK_CALLS=0 staged:PURLIN_ZERO_COPY=0; do for cs in ReduceScatter:256K AllGather:256K; do c=${cs%:*}; s=${cs#*:}; d=$O/trace/${v%%:*}_${c}_$s; mkdir -p $d; env ${v#*:} PURLIN_TRACE_FILE=$d/t LD_PRELOAD=$L $B/perf/snac/snac_bench $d --ranks 8 --min $s --max $s --collectives $c --no-check || return 1; /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $d >> $O/trace/summary_${v%%:*}.txt; done; done; }
export R O B L L20 C6; export -f lab nt trace; mkdir -p $O/nt
step lab 100 lab
/opt/torch/.venv/bin/python3 perf/snac/ab_table.py $O/lab_ main b21 > $O/table_lab.txt 2>&1; tail -7 $O/table_lab.txt
COMPARE_RANKS="8 1" PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives $C6,SendRecvAllToAll" step compare 100 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
grep -A9 "^| collective" $O/compare/summary.md | head -22
step native 100 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
SANITIZE_TOOLS="memcheck racecheck" SANITIZE_TIMEOUT=30 SANITIZE_FILTER='Native/Matrix.*/W4_ReduceScatter:Native/Matrix.*/W4_Reduce' step san 70 bash tests/integration/run_sanitizers.sh $B $O/san
tail -4 $O/san.log
step nt 35 nt
cat $O/nt/table.md 2>/dev/null | head -14
MPS_TIMEOUT=40 PURLIN_BUILD_DIR=$B step mps 80 perf/snac/compare_mps.sh $O/mps /tmp/ref/libnccl.so.2
grep -A4 "^| collective" $O/mps/summary.md | head -6
left=$(( 510 - ($(date +%s)-T0) )); [ $left -gt 5 ] && step trace $left trace
cat $O/steps.txt
tar czf $OUT/r21.tgz -C $OUT r21
