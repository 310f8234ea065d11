#!/usr/bin/env bash
# Packs fuzz targets for a machine where they cannot be built (the GPU machines: no compiler, no
# network) as scripts/fuzz_device.sh expects them, in one tarball to carry there:
#   bin/<target>     build-asan/fuzz/<target>, debug info stripped (the pack stays small)
#   lib/             the shared libraries they load, less glibc's own (the machine has those)
#   seeds/<target>   the seeds fuzz/gather_seeds.sh gathers from the files the project ships
# Usage (repository root, after scripts/configure-asan.sh):
#   scripts/fuzz_pack.sh OUT.tgz TARGET...     e.g. .device/fuzzpack.tgz fuzz_recorder fuzz_nsys_rows
# Then on the machine: mkdir -p /tmp/fz && tar xzf OUT.tgz -C /tmp/fz &&
#   FUZZ_PACK=/tmp/fz OUT=$OUT RUNS=N bash scripts/fuzz_device.sh TARGET:SECONDS ...
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/fuzz_pack.sh OUT.tgz TARGET...}
shift
[ $# -gt 0 ] || { echo "fuzz_pack.sh: name at least one target (e.g. fuzz_recorder)" >&2; exit 2; }
case $out in /*) ;; *) out=$PWD/$out ;; esac
ninja -C build-asan "$@" fuzz_reader > /dev/null
bash fuzz/gather_seeds.sh build-asan/fuzz-seeds build-asan/fuzz/fuzz_reader > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/lib" "$work/seeds"
for t in "$@"; do
  objcopy --strip-debug "build-asan/fuzz/$t" "$work/bin/$t"
  cp -r "build-asan/fuzz-seeds/$t" "$work/seeds/$t"
  ldd "build-asan/fuzz/$t" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L -n "$lib" "$work/lib/"; done
done
mkdir -p "$(dirname "$out")"
tar czf "$out.tmp.$$" -C "$work" . && mv "$out.tmp.$$" "$out"
echo "fuzz_pack.sh: $out ($(du -h "$out" | cut -f1)): $* with $(ls "$work/lib" | wc -l) libraries," \
  "$(find "$work/seeds" -type f | wc -l) seeds"
