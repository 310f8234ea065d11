#!/usr/bin/env bash
# On the GPU machine: records the real programs of examples/programs with `sightline record` (fixed
# and default -o), and Nsight Systems where asked, and keeps what a user would see (summary lines,
# file lists, process trees, reports) under $OUT.
# Needs the pack of scripts/device_pack.sh at .device/pack.tgz (and .device/device/ for nsys).
#   OUT=/tmp/out bash examples/programs/run_programs.sh [STAGE...]    stages: mp nvtx hf overhead nsys small floor layers shapes
# floor: floor_sweep.py's sweep (decode and prefill of a dense and a MoE model against the floor, with
# the machine's measured copy bandwidth and GEMM throughput), then one configuration recorded with
# GPU metrics and analysed with --model-config, with the measured peaks and with the datasheet's,
# then the per-layer runs (also alone: stage layers), and a PyTorch profiler trace with shapes
# analysed without a config (the floor from GEMM shapes; also alone: stage shapes).
# small: the HF programs at 2-4 layers (samples to ship): recordings, memory snapshots, a PyTorch
# profiler trace, and (with nsys) an Nsight Systems export of the compiled one.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:?set OUT}
stages=${*:-mp hf overhead}
mkdir -p /tmp/sl && tar xzf "$root/.device/pack.tgz" -C /tmp/sl
export LD_LIBRARY_PATH=/tmp/sl/lib:/usr/local/cuda/extras/CUPTI/lib64:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SIGHTLINE_RECORDER_LIB=/tmp/sl/lib/libsightline_recorder.so
SL=/tmp/sl/bin/sightline
P=$root/examples/programs
runs=/tmp/runs
rm -rf $runs && mkdir -p $runs
log() { echo "== $*" | tee -a $runs/summary.txt; }

# One recorded run in its own folder: the program's stdout, the recorder's stderr, the files.
rec() {  # rec NAME [record options] -- PROGRAM ARGS
  local name=$1; shift
  mkdir -p $runs/$name && pushd $runs/$name > /dev/null
  local t0=$(date +%s.%N)
  $SL record "$@" > stdout.txt 2> stderr.txt
  local rc=$?
  local t1=$(date +%s.%N)
  log "$name: exit $rc, $(python3 -c "print(round($t1-$t0,2))") s"
  grep -E '^sightline' stderr.txt | tee -a $runs/summary.txt
  ls -la >> $runs/summary.txt
  tail -1 stdout.txt | tee -a $runs/summary.txt
  popd > /dev/null
}

if [[ $stages == *mp* ]]; then
  rec mp_fixed_w0 -o run.slrec -- python3 $P/mp_server.py --requests 48 --tokens 32 --workers 0
  rec mp_fixed_w2 -o run.slrec -- python3 $P/mp_server.py --requests 48 --tokens 32 --workers 2
  rec mp_default_w2 -- python3 $P/mp_server.py --requests 48 --tokens 32 --workers 2
fi
if [[ $stages == *nvtx* ]]; then
  # NVTX ranges from processes that never initialise CUDA (the front end, the detokenizer).
  rec mp_nvtx_w2 -o run.slrec -- python3 $P/mp_server.py --requests 48 --tokens 32 --workers 2 --nvtx
fi
if [[ $stages == *hf* ]]; then
  rec hf_static_fixed -o run.slrec -- python3 $P/hf_generate.py --mode static --calls 3
  rec hf_eager_default -- python3 $P/hf_generate.py --mode eager --calls 3
fi
if [[ $stages == *small* ]]; then
  small="--calls 2 --layers 2 --new-tokens 16 --batch 4"
  rec hf_static_small -o run.slrec -- python3 $P/hf_generate.py --mode static $small
  rec hf_eager_small -o run.slrec -- python3 $P/hf_generate.py --mode eager $small
  mkdir -p $runs/snap && pushd $runs/snap > /dev/null
  for mode in eager static; do
    python3 $P/hf_generate.py --mode $mode --calls 1 --layers 4 --new-tokens 16 --batch 4 \
      --snapshot hf_${mode}.pickle > hf_${mode}.truth.json 2> hf_${mode}.stderr.txt
    log "snapshot $mode: exit $?, $(cat hf_${mode}.truth.json)"
  done
  python3 $P/hf_generate.py --mode eager $small --torch-profile kineto_hf_eager.json > kineto_hf_eager.truth.json 2>&1
  log "torch profile eager: exit $?, $(tail -1 kineto_hf_eager.truth.json)"
  popd > /dev/null
  if [ -d "$root/.device/device" ]; then
    source "$root/.device/device/nsys-env.sh" "$root/.device/device"
    mkdir -p $runs/nsys_hf_static && pushd $runs/nsys_hf_static > /dev/null
    $NSYS profile -t cuda,nvtx,osrt -s none --cpuctxsw none -o /tmp/hfs python3 $P/hf_generate.py --mode static $small > stdout.txt 2> stderr.txt
    [ -f /tmp/hfs.nsys-rep ] || $QDSTRM_IMPORTER -i /tmp/hfs.qdstrm >> stderr.txt 2>&1
    $NSYS export --type sqlite -o $runs/nsys_hf_static/hf_static.sqlite /tmp/hfs.nsys-rep >> stderr.txt 2>&1
    log "nsys hf_static: $(tail -1 stdout.txt)"
    $SL analyze hf_static.sqlite > hf_static.report.txt 2>&1
    popd > /dev/null
  fi
  for f in $runs/snap/*.pickle $runs/snap/*.json; do
    [ -f "$f" ] && timeout 300 $SL analyze "$f" > "$f.report.txt" 2>&1
  done
fi
if [[ $stages == *floor* ]]; then
  mkdir -p $runs/floor_sweep && pushd $runs/floor_sweep > /dev/null
  python3 $P/floor_sweep.py --out . > sweep.txt 2> sweep.stderr.txt
  log "floor sweep: exit $?"
  tail -30 sweep.txt | tee -a $runs/summary.txt
  popd > /dev/null
  rec floor_dense_b16 -o run.slrec --gpu-metrics -- python3 $P/floor_sweep.py --out . --only dense \
    --batches 16 --contexts 1024 --steps 30 --nvtx
  pushd $runs/floor_dense_b16 > /dev/null
  bw=$(python3 -c "import json; print(json.load(open('peaks.json'))['copy_gbps'])")
  tf=$(python3 -c "import json; print(json.load(open('peaks.json'))['gemm_bf16_tflops'])")
  timeout 300 $SL analyze run.slrec --model-config dense/config.json --batch 16 --context 1024 \
    --peak-bandwidth $bw --peak-tflops $tf > floor.measured.report.txt 2>&1
  log "floor analyze (measured peaks): exit $?"
  timeout 300 $SL analyze run.slrec --model-config dense/config.json --batch 16 --context 1024 \
    --format json -o floor.datasheet.report.json > floor.datasheet.stderr.txt 2>&1
  log "floor analyze (datasheet peaks): exit $?"
  sed -n '/^== How far from the hardware/,/^== [^H]/p' floor.measured.report.txt | head -60 | tee -a $runs/summary.txt
  grep -A2 'their floor' floor.measured.report.txt | head -6 | tee -a $runs/summary.txt
  popd > /dev/null
fi
if [[ $stages == *floor* || $stages == *shapes* ]]; then
  # The floor from GEMM shapes (no config, no snapshot): 5 decode steps of the dense model under
  # the PyTorch profiler with record_shapes, analysed with --batch and --context alone;
  # floor_shapes_check.py compares each step's weight bytes and FLOPs with the program's.
  mkdir -p $runs/floor_shapes_dense_b16 && pushd $runs/floor_shapes_dense_b16 > /dev/null
  python3 $P/floor_sweep.py --out . --only dense --batches 16 --contexts 1024 --steps 5 \
    --torch-profile kineto.json > stdout.txt 2> stderr.txt
  log "floor torch profile (dense): exit $?, $(grep '^torch profile' stdout.txt)"
  timeout 300 $SL analyze kineto.json --batch 16 --context 1024 > floor.shapes.report.txt 2>&1
  log "floor from GEMM shapes: exit $?"
  timeout 300 $SL analyze kineto.json --batch 16 --context 1024 --format json \
    -o floor.shapes.report.json > floor.shapes.stderr.txt 2>&1
  sed -n '/^== How far from the hardware/,/^== [^H]/p' floor.shapes.report.txt | head -40 | tee -a $runs/summary.txt
  grep -E 'Weight bytes from' floor.shapes.report.txt | tee -a $runs/summary.txt
  python3 $P/floor_shapes_check.py floor.shapes.report.json kineto.json.truth.json | tee -a $runs/summary.txt
  popd > /dev/null
fi
if [[ $stages == *floor* || $stages == *layers* ]]; then
  # Per layer: an NVTX range per decoder layer and around the lm_head (layers.json: the program's
  # bytes per layer, checked by floor_layers_check.py), and a memory snapshot whose weights give
  # the floor without a config (--weights-snapshot); the dense model and the MoE one.
  for kind in dense moe; do
    rec floor_layers_${kind}_b16 -o run.slrec --gpu-metrics -- python3 $P/floor_sweep.py --out . \
      --only $kind --batches 16 --contexts 1024 --steps 20 --nvtx --layer-ranges --snapshot snap.pickle
    pushd $runs/floor_layers_${kind}_b16 > /dev/null
    timeout 300 $SL analyze run.slrec --model-config $kind/config.json --batch 16 --context 1024 \
      > floor.layers.report.txt 2>&1
    log "floor layers ($kind): exit $?"
    timeout 300 $SL analyze run.slrec --model-config $kind/config.json --batch 16 --context 1024 \
      --format json -o floor.layers.report.json > floor.layers.stderr.txt 2>&1
    python3 $P/floor_layers_check.py floor.layers.report.json layers.json | tee -a $runs/summary.txt
    sed -n '/Layers against their floor/,/^  note/p' floor.layers.report.txt | head -30 | tee -a $runs/summary.txt
    grep -A1 'their floor' floor.layers.report.txt | head -3 | tee -a $runs/summary.txt
    timeout 300 $SL analyze run.slrec --weights-snapshot snap.pickle --batch 16 \
      > floor.snapshot.report.txt 2>&1
    log "floor from the snapshot ($kind): exit $?"
    grep -E 'Weight bytes from|Weights in the memory snapshot' floor.snapshot.report.txt | tee -a $runs/summary.txt
    grep '^snapshot' stdout.txt | tee -a $runs/summary.txt
    popd > /dev/null
  done
fi
# Reports of every recording, as a user would ask for them.
for d in $runs/*/; do
  for f in "$d"*.slrec; do
    [ -f "$f" ] || continue
    timeout 300 $SL analyze "$f" > "${f%.slrec}.report.txt" 2>&1 || echo "analyze $f: exit $?" >> $runs/summary.txt
  done
done
if [[ $stages == *overhead* ]]; then
  # What watching the process tree costs a program that never touches CUDA (so nothing is injected):
  # a CPU-bound multi-process job, plain and under `sightline record`, interleaved.
  cat > /tmp/cpu_job.py <<'PY'
import multiprocessing as mp, sys, time
def work(n):
    x = 0
    for i in range(n): x += i * i
    return x
if __name__ == "__main__":
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(8) as pool:
        pool.map(work, [3_000_000] * 64)
    print(f"{time.perf_counter() - t0:.4f}")
PY
  for round in 1 2 3 4 5 6 7; do
    plain=$(python3 /tmp/cpu_job.py)
    recd=$(cd /tmp && $SL record -o /tmp/ovh.slrec -- python3 /tmp/cpu_job.py 2>/tmp/ovh.err)
    echo "overhead round $round: plain $plain s, recorded $recd s" | tee -a $runs/summary.txt
  done
  cp /tmp/ovh.processes.json $runs/overhead.processes.json 2>/dev/null
  grep -h '"watch_cpu_ns"\|"scans"\|"end_ns"\|"start_ns"' /tmp/ovh.processes.json | head -4 >> $runs/summary.txt
fi
if [[ $stages == *nsys* ]] && [ -d "$root/.device/device" ]; then
  source "$root/.device/device/nsys-env.sh" "$root/.device/device"
  mkdir -p $runs/nsys_mp_w2 && cd $runs/nsys_mp_w2
  $NSYS profile -t cuda,nvtx,osrt -s none --cpuctxsw none -o /tmp/mpn python3 $P/mp_server.py --requests 48 --tokens 32 --workers 2 > stdout.txt 2> stderr.txt
  [ -f /tmp/mpn.nsys-rep ] || $QDSTRM_IMPORTER -i /tmp/mpn.qdstrm >> stderr.txt 2>&1
  $NSYS export --type sqlite -o $runs/nsys_mp_w2/mp_w2.sqlite /tmp/mpn.nsys-rep >> stderr.txt 2>&1
  log "nsys mp_w2: $(tail -1 stdout.txt)"
  $SL analyze mp_w2.sqlite > mp_w2.report.txt 2>&1
fi
cd /tmp && tar czf $out/runs.tgz -C /tmp runs && cp $runs/summary.txt $out/summary.txt
ls -la $out
