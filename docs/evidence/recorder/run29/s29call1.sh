#!/bin/bash
# Session 29, device call 1 (LIMIT=520): what being attached costs outside the capture windows on
# eager HF generate(): no profiler, our node mode, without the driver launch calls (on for the
# whole run), and without every part that is on outside windows (sl_node_bare), 3 repetitions.
bash cuda/recorder/tools/window_call.sh hf_eager "sl_node none sl_node_nodrv sl_node_bare" 3
