#!/usr/bin/env bash
# Runs two sightline binaries on every kind of document and its mixes (serving results, iteration
# logs, model configs, eager references, TensorRT engines, Nsight Compute exports, sweeps, diffs of
# each kind, and the usage errors), comparing the JSON reports byte for byte and the exit codes
# and error messages.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OLD=$1; NEW=$2; OUT=$3; mkdir -p "$OUT"
S=examples/samples; D=tests/data
same=0; differ=0
run() {
  local name=$1; shift
  "$OLD" "$@" --format json -o "$OUT/$name.old.json" >/dev/null 2>"$OUT/$name.old.err"; local a=$?
  "$NEW" "$@" --format json -o "$OUT/$name.new.json" >/dev/null 2>"$OUT/$name.new.err"; local b=$?
  if [ "$a" != "$b" ]; then echo "DIFFERENT exit: $name ($a vs $b)"; differ=$((differ+1)); return; fi
  if ! cmp -s "$OUT/$name.old.err" "$OUT/$name.new.err"; then echo "DIFFERENT stderr: $name"; diff "$OUT/$name.old.err" "$OUT/$name.new.err" | head -6; differ=$((differ+1)); return; fi
  if [ -f "$OUT/$name.old.json" ] && ! cmp -s "$OUT/$name.old.json" "$OUT/$name.new.json"; then echo "DIFFERENT report: $name"; differ=$((differ+1)); return; fi
  echo "same ($a): $name"; same=$((same+1))
}
run serving_alone analyze $S/serving_loop_h100.requests.jsonl
run serving_slo analyze $S/serving_loop_h100.requests.jsonl --slo ttft=200,itl=50
run serving_with_trace analyze $S/serving_loop_h100.slrec --requests $S/serving_loop_h100.requests.jsonl
run serving_log_trace analyze $S/serving_loop_h100.slrec $S/serving_loop_h100.requests.jsonl $S/serving_loop_h100.iterations.jsonl
run log_alone analyze $S/serving_loop_h100.iterations.jsonl
run log_named analyze $S/serving_loop_h100.slrec --iteration-log $S/serving_loop_h100.iterations.jsonl
for f in $D/serving/*.json $D/serving/*.jsonl; do run "serving_$(basename $f)" analyze $f; done
run floor analyze $S/llama_decode_h100.nsys.sqlite --model-config $D/model_config/llama_decode_sample.config.json --batch 8 --context 128
run floor_as_input analyze $S/llama_decode_h100.nsys.sqlite $D/model_config/llama_decode_sample.config.json
run floor_flags_no_config analyze $S/llama_decode_h100.nsys.sqlite --batch 8
run two_configs analyze $S/llama_decode_h100.nsys.sqlite $D/model_config/llama_decode_sample.config.json $D/model_config/llama_3_2_1b.config.json
run config_alone analyze $D/model_config/llama_decode_sample.config.json
run config_wrong_option analyze $S/llama_decode_h100.nsys.sqlite --model-config $S/serving_loop_h100.requests.jsonl
run requests_wrong analyze $S/llama_decode_h100.nsys.sqlite --requests $S/llama_decode_h100.pytorch.json.gz
run two_results analyze $D/serving/request_log_small.jsonl $D/serving/sglang_bench_serving_small.jsonl
run two_logs analyze $S/serving_loop_h100.iterations.jsonl $D/nsys/graph_serve_node_h200.iterations.jsonl
run slo_no_results analyze $S/llama_decode_h100.nsys.sqlite --slo ttft=200
run eager analyze $D/nsys/graph_serve_graph_only_h200.sqlite.gz --eager-reference $D/nsys/graph_serve_eager_only_h200.sqlite.gz
run eager_log analyze $D/nsys/graph_serve_graph_only_h200.sqlite.gz --iteration-log $D/nsys/graph_serve_graph_only_h200.iterations.jsonl --eager-reference $D/nsys/graph_serve_eager_only_h200.sqlite.gz
run eager_wrong analyze $D/nsys/graph_serve_graph_only_h200.sqlite.gz --eager-reference $D/nsys/graph_serve_graph_only_h200.iterations.jsonl
run eager_no_trace analyze $D/nsys/graph_serve_graph_only_h200.iterations.jsonl --eager-reference $D/nsys/graph_serve_eager_only_h200.sqlite.gz
run trt analyze $D/trt/tiny.engine.graph.json $D/trt/tiny.engine.profile.json
run trt_int8 analyze $D/trt/tiny_int8.engine.graph.json
run trt_dir analyze ../shared/traces/trt
run trt_no_findings analyze $D/trt/tiny.engine.graph.json --no-findings
run trt_and_trace analyze $D/trt/tiny.engine.graph.json $S/llama_decode_h100.nsys.sqlite
run trt_and_ncu analyze $D/trt/tiny.engine.graph.json $D/ncu/h100_torch_full_details.csv.gz
run ncu analyze $D/ncu/h100_torch_full_details.csv.gz
run ncu_raw analyze $D/ncu/h100_torch_full_details.csv.gz $D/ncu/h100_torch_full_raw.csv.gz
run ncu_and_serving analyze $D/ncu/h100_torch_full_details.csv.gz $S/serving_loop_h100.requests.jsonl
run ncu_dir analyze $D/ncu
run sweep analyze fuzz/seeds/sweep_csv/grid.csv
run sweep_dir analyze fuzz/seeds/sweep_csv
run dir_samples analyze $S
run dir_serving analyze $D/serving
run dir_nsys analyze $D/nsys
run recorder_dir analyze $D/recorder
run kern_sum analyze $S/llama_decode_h100.nsys_kern_sum.csv
run nothing analyze
run diff_serving diff $D/serving/request_log_small.jsonl $D/serving/sglang_bench_serving_small.jsonl
run diff_serving_runs diff $D/serving/request_log_small.jsonl $D/serving/sglang_bench_serving_small.jsonl -- $D/serving/aiperf_profile_export_small.jsonl $D/serving/vllm_detailed_small.json
run diff_serving_dirs diff $D/serving $D/serving
run diff_trt diff $D/trt/tiny.engine.graph.json $D/trt/tiny_int8.engine.graph.json
run diff_trt_runs diff $D/trt/tiny.engine.graph.json $D/trt/tiny.engine.graph.json -- $D/trt/tiny_int8.engine.graph.json
run diff_ncu diff $D/ncu/h100_torch_full_details.csv.gz $D/ncu/h100_torch_full_raw.csv.gz
run diff_logs diff $S/serving_loop_h100.iterations.jsonl $D/nsys/graph_serve_node_h200.iterations.jsonl
run diff_mixed diff $S/serving_loop_h100.iterations.jsonl $S/llama_decode_h100.nsys.sqlite
run diff_traces diff $S/llama_decode_h100.nsys.sqlite $S/llama_decode_h100.pytorch.json.gz
run diff_trace_runs diff $S/llama_decode_h100.nsys.sqlite $S/llama_decode_h100.nsys.sqlite -- $S/llama_decode_h100.pytorch.json.gz
run diff_runs_mixed diff $S/llama_decode_h100.nsys.sqlite $D/serving/request_log_small.jsonl -- $S/llama_decode_h100.pytorch.json.gz
run diff_configs diff $D/model_config/llama_decode_sample.config.json $D/model_config/llama_3_2_1b.config.json
echo "kinds: $same same, $differ different (outputs in $OUT)"
