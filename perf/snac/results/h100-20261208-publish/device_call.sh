#!/usr/bin/env bash
# device call r23: b23 (zero-copy publication as (item, reader) pairs over the lanes, drain
# waits spread over the lanes, pair-launch trace points; carries last_of_team and the pair
# sequence loads of 1ba3ea0) beside b22 (1ba3ea0), both built on the CPU machine and carried:
#   perf/snac/carry_build.sh 1ba3ea0 b22; perf/snac/carry_build.sh HEAD b23; ../shared/tools/reference-nccl.sh .device/ref
#   run with carry [".device/b22", ".device/b23", ".device/ref"]
# Native GPU subset on b23, Purlin A/B b22 vs b23, b23 beside NCCL 2.32.3 (8 and 1 ranks),
# traces of the publication and of send/recv, racecheck of the case r21 failed.
R=$PWD; O=$OUT/r23; mkdir -p $O; T0=$(date +%s)
step() { local name=$1 cap=$2; shift 2; local t=$(date +%s); timeout -k 5 $cap bash -c '"$@"' _ "$@" >$O/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s)-t ))s (cap $cap)" | tee -a $O/steps.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv | tee $O/env.txt
cat $R/.device/b22/COMMIT $R/.device/b23/COMMIT | tee -a $O/env.txt
for b in b22 b23; do mkdir -p /tmp/purlin-carry/$b; rm -rf /tmp/purlin-carry/$b/build; ln -s $R/.device/$b /tmp/purlin-carry/$b/build; done
B=/tmp/purlin-carry/b23/build; L=$B/nccl_shim/libnccl.so.2; L22=/tmp/purlin-carry/b22/build/nccl_shim/libnccl.so.2
export CUDA_DEVICE_MAX_CONNECTIONS=32 NCCL_NVLS_ENABLE=0
C7=AllReduce,AllGather,ReduceScatter,AllToAll,Broadcast,Reduce,SendRecvAllToAll
lab() { for i in 1 2 3; do LD_PRELOAD=$L22 $B/perf/snac/snac_bench $O/lab_b22_$i --ranks 8 --min 1K --max 32M --collectives $C7 || return 1
  LD_PRELOAD=$L $B/perf/snac/snac_bench $O/lab_b23_$i --ranks 8 --min 1K --max 32M --collectives $C7 || return 1; done; }
trace() { for t in b22:ReduceScatter:256K b22:AllGather:256K b22:AllToAll:256K b23:ReduceScatter:256K b23:AllGather:256K b23:AllToAll:256K b23:AllToAll:8K b23:AllReduce:8K b23:SendRecvAllToAll:8K b23:SendRecvAllToAll:256K; do
  b=${t%%:*}; cs=${t#*:}; c=${cs%:*}; s=${cs#*:}; lib=$([ $b = b22 ] && echo $L22 || echo $L); d=$O/trace/${b}_${c}_$s; mkdir -p $d
  PURLIN_TRACE_FILE=$d/t LD_PRELOAD=$lib $B/perf/snac/snac_bench $d --ranks 8 --min $s --max $s --collectives $c --no-check || return 1
  /opt/torch/.venv/bin/python3 perf/snac/trace_summary.py $d >> $O/trace/summary_$b.txt; done; }
export R O B L L22 C7; export -f lab trace
step native 110 $B/tests/native/native_collectives_test "--gtest_filter=Native/Matrix.*:Native/Graph.*:Mismatch.*:Stall.*:Native/P2p.*:GpuTest.P2p*:MultiComm.*:Soak.*:Native/ThreadPerRank.*/W8_*"
tail -3 $O/native.log
step lab 75 lab
/opt/torch/.venv/bin/python3 perf/snac/ab_table.py $O/lab_ b22 b23 > $O/table_lab.txt 2>&1; tail -9 $O/table_lab.txt
COMPARE_RANKS="8 1" PURLIN_BUILD_DIR=$B COMPARE_ARGS="--min 1K --max 256M --collectives $C7" step compare 90 perf/snac/compare.sh $O/compare $R/.device/ref/libnccl.so.2.xz
grep -A9 "^| collective" $O/compare/summary.md | head -11
step trace 40 trace
left=$(( 570 - ($(date +%s)-T0) ))
SANITIZE_TOOLS=racecheck SANITIZE_TIMEOUT=$left SANITIZE_FILTER='Native/Matrix.*/W4_Reduce:Native/Matrix.*/W4_AllGather' step san $((left+10)) bash tests/integration/run_sanitizers.sh $B $O/san
tail -3 $O/san.log; grep -c "Failure\|wrong" $O/san/racecheck.log
cat $O/steps.txt
tar czf $OUT/r23.tgz -C $OUT r23
