#!/usr/bin/env bash
# configure the test, asan and tsan builds of a tree into /tmp/fcm/cfg/<name>-<kind> (no build)
set -uo pipefail
src=$1; name=$2; out=/tmp/fcm/cfg; mkdir -p $out
export CCACHE_DISABLE=1
cmake -S $src -B $out/$name-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_WERROR=ON >/dev/null 2>&1 || echo "test cfg failed"
CXX=clang++ cmake -S $src -B $out/$name-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_FUZZ=ON -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF >/dev/null 2>&1 || echo "asan cfg failed"
CXX=clang++ cmake -S $src -B $out/$name-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTLINE_TSAN=ON -DSIGHTLINE_WERROR=ON -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_MPI=OFF >/dev/null 2>&1 || echo "tsan cfg failed"
