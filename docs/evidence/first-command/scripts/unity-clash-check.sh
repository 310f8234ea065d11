#!/usr/bin/env bash
# Each stage of src/ as one translation unit (every .cc not in SKIP_LIST), syntax only: a
# "redefinition" error names a file that defines a name an earlier file of its stage defines too.
# usage: unity-clash-check.sh SRC_DIR SKIP_LIST OUT_DIR   (SKIP_LIST: one path under src/ per line)
set -uo pipefail
src=$1; skip=$2; out=$3; mkdir -p "$out"
C="c++ -DFMT_SHARED -DSIGHTLINE_VERSION=\"0.1.0\" -I$src -I$src/../include -std=c++20 -fmax-errors=0 -w"
cd "$src"
for st in $(ls -d */ | tr -d /); do
  [ "$st" = cli ] && continue  # already one translation unit
  find "$st" -name '*.cc' | sort | grep -v -x -f "$skip" | sed "s|.*|#include \"$src/&\"|" > "$out/$st.cc"
  $C -fsyntax-only "$out/$st.cc" > "$out/$st.err" 2>&1
  echo "$st: $(grep -c 'error:' "$out/$st.err") errors"
done
