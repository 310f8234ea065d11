#!/usr/bin/env bash
# Packs the sightline binary and libsightline_recorder.so, built here, for the GPU machine (no
# Debian packages, no network there) in one tarball to carry:
#   bin/sightline, lib/libsightline_recorder.so, lib/ the shared libraries they load (less glibc's
#   own and CUDA's: the machine has those)
# Usage (repository root, after scripts/build.sh): scripts/device_pack.sh .device/pack.tgz
# On the machine: mkdir -p /tmp/sl && tar xzf .device/pack.tgz -C /tmp/sl &&
#   export LD_LIBRARY_PATH=/tmp/sl/lib:$LD_LIBRARY_PATH SIGHTLINE_RECORDER_LIB=/tmp/sl/lib/libsightline_recorder.so
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/device_pack.sh OUT.tgz}
case $out in /*) ;; *) out=$PWD/$out ;; esac
ninja -C build sightline sightline_recorder > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/lib"
objcopy --strip-debug build/src/sightline "$work/bin/sightline"
objcopy --strip-debug build/cuda/recorder/libsightline_recorder.so "$work/lib/libsightline_recorder.so"
for f in build/src/sightline build/cuda/recorder/libsightline_recorder.so; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|libcuda|libcupti|ld-linux[^/]*)\.so' |
    grep -v -E '^/usr/local/cuda' |
    while read -r lib; do cp -L -n "$lib" "$work/lib/"; done
done
mkdir -p "$(dirname "$out")"
tar czf "$out.tmp.$$" -C "$work" . && mv "$out.tmp.$$" "$out"
echo "device_pack.sh: $out ($(du -h "$out" | cut -f1)), $(ls "$work/lib" | wc -l) libraries"
