#!/usr/bin/env bash
# The GPU validation run, in one go (see README.md): calculator vs the CUDA runtime on random
# configurations, calculator vs Nsight Compute on launches of the same kernels, and a PyTorch
# program profiled with `ncu --set full` whose CSV exports become test fixtures.
# Usage (repository root, on the GPU machine): tests/kernel/gpu_validation/run_on_gpu.sh OUT_DIR
# Environment: TRIALS, TRIAL_SEED, LAUNCHES, LAUNCH_SEED (defaults 2000, 1, 64, 2); SKIP_TORCH=1
# stops after the launches (no PyTorch profile, no fixture exports).
# Builds validate_occupancy first unless build-kernel-validation/validate_occupancy exists.
set -u
out=${1:?usage: run_on_gpu.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
bin=build-kernel-validation/validate_occupancy
mkdir -p "$out"
log="$out/log.txt"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  ncu --version | tail -1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
} 2>&1 | tee "$log"
[ -x "$bin" ] || "$here/build.sh" 2>&1 | tee -a "$log"

echo "== 1. cudaOccupancyMaxActiveBlocksPerMultiprocessor vs calculator" | tee -a "$log"
"$bin" --trials ${TRIALS:-2000} --seed ${TRIAL_SEED:-1} --csv "$out/trials.csv" 2>&1 | tee -a "$log"

echo "== 2. ncu block limits vs calculator on ${LAUNCHES:-64} launches" | tee -a "$log"
ncu --section LaunchStats --section Occupancy --csv --page raw --print-units base \
  "$bin" --launch ${LAUNCHES:-64} --seed ${LAUNCH_SEED:-2} --plan "$out/plan.csv" > "$out/launches_raw.csv" 2> /tmp/ncu2.err
tail -3 /tmp/ncu2.err | tee -a "$log"
python3 "$here/compare_ncu_launch.py" "$out/plan.csv" "$out/launches_raw.csv" 2>&1 | tee -a "$log"
if [ -n "${SKIP_TORCH:-}" ]; then ls -la "$out" | tee -a "$log"; exit 0; fi
ncu --section LaunchStats --section Occupancy --csv --page details \
  "$bin" --launch ${LAUNCHES:-64} --seed ${LAUNCH_SEED:-2} --plan /tmp/plan2.csv > /tmp/launches_details.csv 2>> /tmp/ncu2.err

echo "== 3. PyTorch program under ncu --set full" | tee -a "$log"
ncu --set full --launch-count 24 -f -o /tmp/torch python3 "$here/torch_workload.py" \
  > /tmp/ncu3.log 2>&1
tail -4 /tmp/ncu3.log | tee -a "$log"
ncu --import /tmp/torch.ncu-rep --csv --page details > "$out/torch_full_details.csv" 2>> "$log"
ncu --import /tmp/torch.ncu-rep --csv --page raw > "$out/torch_full_raw.csv" 2>> "$log"
ncu --import /tmp/torch.ncu-rep --csv --page details --print-units base \
  > /tmp/torch_full_details_base.csv 2>> "$log"
ncu --import /tmp/torch.ncu-rep --csv --page details --print-details all \
  > /tmp/torch_full_details_all.csv 2>> "$log" || echo "no --print-details" | tee -a "$log"
# The same program with ncu's CSV straight to stdout, as users capture it (warnings first).
ncu --csv --page details --section LaunchStats --section Occupancy --section SpeedOfLight \
  --launch-count 6 python3 "$here/torch_workload.py" > /tmp/torch_stdout_details.csv 2>&1
tar -C /tmp -czf "$out/extras.tar.gz" torch.ncu-rep torch_full_details_base.csv \
  torch_full_details_all.csv torch_stdout_details.csv launches_details.csv ncu3.log ncu2.err
ls -la "$out" | tee -a "$log"
