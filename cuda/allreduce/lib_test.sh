#!/bin/sh
# ctest's allreduce_lib_gpu: sightline-allreduce-lib-test on two GPUs, or skipped (exit 77) where
# there are fewer than two GPUs or no mpirun. Usage: lib_test.sh BINARY
bin=${1:?usage: lib_test.sh BINARY}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -lt 2 ] || ! command -v mpirun > /dev/null 2>&1; then
  echo "skipped: needs two GPUs and mpirun (found $gpus GPU(s))"
  exit 77
fi
exec mpirun --allow-run-as-root -n 2 --bind-to none -x NCCL_NVLS_ENABLE=0 \
  ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} "$bin"
