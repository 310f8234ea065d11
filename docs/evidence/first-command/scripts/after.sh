#!/usr/bin/env bash
set -uo pipefail
L=/tmp/fcm/after; rm -rf $L; mkdir -p $L
rm -rf /tmp/fc-after; git clone -q /work/wt-firstcmd /tmp/fc-after
export CCACHE_DIR=$(mktemp -d /tmp/fcm/ccache.XXXX)
cd /tmp/fc-after
{ echo "commit $(git rev-parse HEAD)"; echo "CCACHE_DIR=$CCACHE_DIR (empty)"; date -u; uptime; } > $L/env.txt
config=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" -DSIGHTLINE_BUILD_TESTS=OFF -DSIGHTLINE_BUILD_BENCH=OFF -DSIGHTLINE_CUDA=OFF -DSIGHTLINE_MPI=OFF -DSIGHTLINE_UNITY_BUILD=ON)
uptime > $L/uptime-configure.txt
/usr/bin/time -v -o $L/configure.time cmake -S . -B build-sample "${config[@]}" > $L/configure.log 2>&1
uptime > $L/uptime-build-start.txt
/usr/bin/time -v -o $L/build.time cmake --build build-sample -j 2 --target sightline > $L/build.log 2>&1
echo "build rc=$?" >> $L/env.txt
uptime > $L/uptime-build-end.txt
cp build-sample/.ninja_log $L/ninja_log.txt
/usr/bin/time -v -o $L/analyze.time ./build-sample/src/sightline analyze examples/samples/llama_decode_h100.nsys.sqlite > $L/analyze.out 2> $L/analyze.err
ccache -s > $L/ccache-stats.txt 2>&1
date -u >> $L/env.txt; echo done > $L/DONE
