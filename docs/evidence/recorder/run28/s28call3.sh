#!/bin/bash
# Session 28, device call 3 (LIMIT=540): one more run of our graph and sampled modes on compiled HF
# generate() (to 5 runs each with run27's), then eager HF generate() in node modes, up to 3
# repetitions. (As run, these lines were inline; cuda/recorder/tools/window_call.sh now holds them.)
set -u
export T0=$(date +%s)
LIMIT=200 T0=$(date +%s) bash cuda/recorder/tools/window_call.sh hf_static "sl_sampled16 sl_graph" 1 \
  > /dev/null
bash cuda/recorder/tools/window_call.sh hf_eager "sl_node none nsys_node" 3
