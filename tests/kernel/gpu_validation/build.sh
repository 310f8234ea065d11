#!/usr/bin/env bash
# Builds validate_occupancy: the kernel family once per -maxrregcount value, plus the calculator's
# sources (src/kernel/occupancy.cc, gpu_arch.cc, base/status.cc) compiled straight in, so the
# program needs only the CUDA toolkit. Usage: build.sh [OUT_DIR]  (ARCH=90 by default).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-$root/build-kernel-validation}
arch=${ARCH:-90}
mkdir -p "$out"
pids=()
for r in 0 32 40 64 96 128 168; do
  flags=()
  if [ "$r" -gt 0 ]; then flags=(-maxrregcount="$r"); fi
  nvcc -std=c++17 -O3 -arch=sm_"$arch" "${flags[@]}" -DVARIANT_TAG=r"$r" -I"$here" \
    -c "$here/occupancy_kernels.cu" -o "$out/kernels_r$r.o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
nvcc -std=c++20 -O2 -arch=sm_"$arch" -I"$root/src" -I"$root/include" -I"$here" "$here/validate_occupancy.cu" \
  "$root/src/kernel/occupancy.cc" "$root/src/kernel/gpu_arch.cc" "$root/src/base/status.cc" \
  "$out"/kernels_r*.o -o "$out/validate_occupancy"
echo "built $out/validate_occupancy"
