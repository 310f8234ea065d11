#!/bin/bash
# Session 27, device call 2: graph/sampled mode with a capture range (SIGSEGV in call 1): the old
# recorder (pack) against the new (GRAPH_TRACE on for the whole run), C++ and the compiled HF
# program; then the in-process bench's second repetition.
set -u
T0=$(date +%s)
mkdir -p $OUT/w $OUT/a
mkdir -p .device/recorder && tar xzf .device/pack.tgz -C .device/recorder
export PYTHONHASHSEED=0 NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > $OUT/a/build.log 2>&1 &&
  cmake --build /tmp/bg -j16 --target sightline_recorder decode_loop >> $OUT/a/build.log 2>&1
echo "build rc=$? $(( $(date +%s) - T0 )) s"
export LD_LIBRARY_PATH=$PWD/.device/recorder/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SL=$PWD/.device/recorder/bin/sightline
OLD=$PWD/.device/recorder/lib/libsightline_recorder.so
NEW=/tmp/bg/recorder/libsightline_recorder.so
DL=/tmp/bg/decode_loop/decode_loop
W="--capture-range cudaProfilerApi --capture-range-end repeat"
# the driver launch calls left out: what they cost outside windows
which gdb > /dev/null && echo "gdb present" || echo "no gdb"
for lib in OLD NEW; do
  for mode in graph sampled:4; do
    SIGHTLINE_RECORDER_LIB=${!lib} SIGHTLINE_PROFILE_START_STOP=100-104,200-204 \
      $SL record $W --cuda-graph-trace $mode -o /tmp/a_dl_${lib}_${mode/:/}.slrec -- \
      $DL --hidden 1024 --context 128 --layers 4 --iterations 300 --warmup 20 --cuda-graph \
      > $OUT/a/dl_${lib}_${mode/:/}.txt 2>&1
    echo "decode_loop $lib $mode rc=$? $(tail -1 $OUT/a/dl_${lib}_${mode/:/}.txt | cut -c1-250)"
    $SL analyze /tmp/a_dl_${lib}_${mode/:/}.slrec 2>&1 | grep -iE "kernels|graph" | head -3
  done
done
SIGHTLINE_RECORDER_LIB=$OLD SIGHTLINE_RECORD_DEBUG=1 timeout 120 $SL record $W --cuda-graph-trace graph \
  -o /tmp/a_hf_old.slrec -- python3 -X faulthandler examples/programs/hf_generate.py --mode static \
  --calls 9 --window-every 2 > $OUT/a/hf_old.txt 2>&1
echo "hf static OLD graph rc=$?"; grep -v "^\s*$" $OUT/a/hf_old.txt | tail -25 | cut -c1-200
SIGHTLINE_RECORDER_LIB=$NEW timeout 120 $SL record $W --cuda-graph-trace graph \
  -o /tmp/a_hf_new.slrec -- python3 -X faulthandler examples/programs/hf_generate.py --mode static \
  --calls 9 --window-every 2 > $OUT/a/hf_new.txt 2>&1
echo "hf static NEW graph rc=$?"; tail -4 $OUT/a/hf_new.txt | cut -c1-300
$SL analyze /tmp/a_hf_new.slrec > $OUT/a/hf_new_report.txt 2>&1; echo "analyze rc=$?"; head -30 $OUT/a/hf_new_report.txt
echo "part A: $(( $(date +%s) - T0 )) s"
left=$(( 540 - ($(date +%s) - T0) ))
OUT=$OUT/w SL_DIR=.device/recorder SCRIPT=window_bench.py PIN=2-9 REPS=1 BUDGET_S=$left \
  WORKLOADS="hf_static" MODES="sl_graph sl_sampled16 none nsys_graph sl_node nsys_node sl_node_nodrv" \
  bash cuda/recorder/tools/run_overhead.sh > /dev/null 2>&1
grep -E "rep [0-9]|====|^-- |^   " $OUT/w/window_log.txt | tail -12
echo "total: $(( $(date +%s) - T0 )) s"
