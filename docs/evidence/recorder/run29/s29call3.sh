#!/bin/bash
# Session 29, device call 3 (LIMIT=540): the same for the eager program in blocks of 2
# (hf_eager_b2), node modes (ours, nsys's, no profiler).
bash cuda/recorder/tools/window_call.sh hf_eager_b2 "sl_node none nsys_node" 3
