#!/bin/sh
# `cmake --install` into a temporary prefix, then checks what a user gets: the CLI, the public headers
# (and not the internal ones) and, when the GPU parts were built, the recorder library where the
# installed `sightline record` finds it, the instrument library and its CMake package, and the
# all-reduce library and its header.
# Usage: install_test.sh BUILD_DIR WORK_DIR LIBDIR HAVE_RECORDER HAVE_INSTRUMENT HAVE_ALLREDUCE (0|1)
set -eu
build=$1 work=$2 libdir=$3 have_recorder=$4 have_instrument=$5 have_allreduce=$6
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"

fail() { echo "install test: $*" >&2; exit 1; }
need() { [ -e "$prefix/$1" ] || fail "missing $prefix/$1"; }
refuse() { [ ! -e "$prefix/$1" ] || fail "$prefix/$1 is installed, but it is internal"; }

need bin/sightline
[ -x "$prefix/bin/sightline" ] || fail "$prefix/bin/sightline is not executable"
# The public headers only: the recorder's file format and settings (src/shared) are internal.
need include/sightline/gpu_check.h
for h in recorder_format.h recorder_env.h; do refuse "include/sightline/$h"; done
"$prefix/bin/sightline" record --help > "$work/record_help.txt" ||
  fail "sightline record --help failed"
grep -q -- "--capture-range" "$work/record_help.txt" || fail "sightline record --help: no options"

if [ "$have_instrument" = 1 ]; then
  need include/sightline/instrument.h
  need "$libdir/libsightline_instrument.so"
  need "$libdir/libsightline_instrument.a"
  need "$libdir/cmake/sightline/sightlineConfig.cmake"
  need "$libdir/cmake/sightline/sightlineConfigVersion.cmake"
fi

if [ "$have_allreduce" = 1 ]; then
  need bin/sightline-allreduce-bench
  need include/sightline/allreduce.h
  need "$libdir/libsightline_allreduce.so"
  # Only the C API is exported: no kernel launchers or C++ internals in the dynamic symbol table.
  if command -v nm > /dev/null 2>&1; then
    extra=$(nm -D --defined-only "$prefix/$libdir/libsightline_allreduce.so" |
      awk '$2 == "T" && $3 !~ /^sightline_ar_/ && $3 !~ /^_(init|fini)$/ { print $3 }' | head -3)
    [ -z "$extra" ] || fail "libsightline_allreduce.so exports more than sightline_ar_*: $extra"
  fi
fi

if [ "$have_recorder" = 1 ]; then
  lib=$prefix/$libdir/sightline/libsightline_recorder.so
  need "$libdir/sightline/libsightline_recorder.so"
  # The installed binary, not the build tree's, and no override: it must find the installed library.
  found=$(env -u SIGHTLINE_RECORDER_LIB "$prefix/bin/sightline" record --print-recorder-path) ||
    fail "installed sightline record --print-recorder-path failed"
  [ "$found" = "$(realpath "$lib")" ] || fail "installed sightline resolves '$found', not '$lib'"
  echo "installed sightline record injects $found"
fi
echo "install test: OK ($prefix)"
