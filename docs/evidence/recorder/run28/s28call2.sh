#!/bin/bash
# Session 28, device call 2 (LIMIT=560): compiled HF generate() (hf_static), every tracer and mode
# in one process, 2 more repetitions to add to run27's. (As run, these lines were inline;
# cuda/recorder/tools/window_call.sh now holds them.)
bash cuda/recorder/tools/window_call.sh hf_static \
  "${MODES:-sl_graph sl_sampled16 none nsys_graph sl_node nsys_node}" "${REPS:-2}"
