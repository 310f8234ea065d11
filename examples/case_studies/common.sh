# Shared setup for the case-study scripts (sourced from the repository root on the GPU machine).
# Provides: SL (the CPU sightline binary, carried in .device/sl/{bin,lib}), SIGHTLINE_RECORDER_LIB (built
# here from cuda/ with the CUDA toolkit alone unless already set), NSYS (Nsight Systems from
# .device/device/nsys-env.sh, empty when absent), NVCC_FLAGS. See README.md for how .device is made.
set -u -o pipefail
export PYTHONUNBUFFERED=1
SL_DIR=${SL_DIR:-$PWD/.device/sl}
export LD_LIBRARY_PATH=$SL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SL=${SL:-$SL_DIR/bin/sightline}
NVCC_FLAGS="-std=c++17 -O3 -arch=sm_90 -lineinfo -I$PWD/include"  # include/: sightline/gpu_check.h
if [ -z "${SIGHTLINE_RECORDER_LIB:-}" ]; then
  if [ ! -f /tmp/bg/recorder/libsightline_recorder.so ]; then
    t=$(date +%s)
    cmake -S cuda -B /tmp/bg -G Ninja -DCMAKE_BUILD_TYPE=Release > /tmp/bg-build.log 2>&1 &&
      cmake --build /tmp/bg -j16 --target sightline_recorder >> /tmp/bg-build.log 2>&1 ||
      { echo "recorder build failed"; tail -20 /tmp/bg-build.log; }
    echo "recorder built in $(( $(date +%s) - t )) s"
  fi
  export SIGHTLINE_RECORDER_LIB=/tmp/bg/recorder/libsightline_recorder.so
fi
NSYS=""
if [ -f .device/device/nsys-env.sh ]; then source .device/device/nsys-env.sh .device/device; fi
# nsys_trace NAME CMD...: Nsight Systems (cuda,nvtx) capture of the cudaProfilerStart/Stop range, exported to NAME.sqlite.
nsys_trace() {
  local name=$1; shift
  [ -n "$NSYS" ] || { echo "no nsys"; return 0; }
  $NSYS profile -t cuda,nvtx -s none --cpuctxsw none -c cudaProfilerApi --capture-range-end=stop -f true -o "$name" "$@" > "$name.nsys.log" 2>&1
  [ -f "$name.nsys-rep" ] || $QDSTRM_IMPORTER -i "$name.qdstrm" >> "$name.nsys.log" 2>&1
  $NSYS export --type sqlite -f true -o "$name.sqlite" "$name.nsys-rep" >> "$name.nsys.log" 2>&1
  $NSYS stats --report cuda_gpu_kern_sum --format csv -o "$name" "$name.sqlite" >> "$name.nsys.log" 2>&1
  ls -la "$name".* | sed 's/^/  /'
}
