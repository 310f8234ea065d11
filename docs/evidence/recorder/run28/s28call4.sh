#!/bin/bash
# Session 28, device call 4 (LIMIT=430): eager HF generate() in blocks of 2 (hf_eager_b2), node
# modes. (As run, these lines were inline; cuda/recorder/tools/window_call.sh now holds them.)
bash cuda/recorder/tools/window_call.sh hf_eager_b2 "sl_node none nsys_node" 3
