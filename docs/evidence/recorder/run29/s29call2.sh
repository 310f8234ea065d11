#!/bin/bash
# Session 29, device call 2 (LIMIT=330): more runs where ours was a little above nsys's at the
# median in run28: compiled HF generate() in graph mode (ours, nsys's, no profiler).
bash cuda/recorder/tools/window_call.sh hf_static "sl_graph none nsys_graph" 3
