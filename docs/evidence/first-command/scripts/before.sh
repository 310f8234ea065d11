#!/usr/bin/env bash
set -uo pipefail
L=/tmp/fcm/before; mkdir -p $L
export CCACHE_DIR=$(mktemp -d /tmp/fcm/ccache.XXXX)
cd /tmp/fc-before
{ echo "commit $(git rev-parse HEAD)"; echo "CCACHE_DIR=$CCACHE_DIR (empty)"; date -u; uptime; } > $L/env.txt
/usr/bin/time -v -o $L/install-deps.time bash scripts/install-deps.sh > $L/install-deps.log 2>&1
uptime > $L/uptime-configure.txt
/usr/bin/time -v -o $L/configure.time cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > $L/configure.log 2>&1
uptime > $L/uptime-build-start.txt
/usr/bin/time -v -o $L/build.time cmake --build build -j 2 --target sightline > $L/build.log 2>&1
uptime > $L/uptime-build-end.txt
cp build/.ninja_log $L/ninja_log.txt
/usr/bin/time -v -o $L/analyze.time ./build/src/sightline analyze examples/samples/llama_decode_h100.nsys.sqlite > $L/analyze.out 2> $L/analyze.err
ccache -s > $L/ccache-stats.txt 2>&1
date -u >> $L/env.txt; echo done > $L/DONE
