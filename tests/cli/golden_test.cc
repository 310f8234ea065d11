// Golden tests: each input trace -> JSON report, compared byte for byte with
// tests/golden/NAME.json. Update after an intended change with `scripts/update-golden.sh`
// (SIGHTLINE_UPDATE_GOLDEN=1) and review the diff. Inputs from ../shared/traces are skipped when
// that directory is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

struct GoldenCase {
  const char* name;             // golden file stem
  const char* file;             // input file name
  bool shared;                  // in ../shared/traces (else relative to the source dir)
  const char* file2 = nullptr;  // a second input analysed together with `file` (ranks of a job)
  // --batch and --context for the floor (with a model config as file2; without one, the floor
  // from the trace's GEMM shapes).
  int64_t batch = 0, context = -1;
};

const GoldenCase kCases[] = {
    {"sample_llama_decode_h100_nsys", "examples/samples/llama_decode_h100.nsys.sqlite", false},
    // The floor of the sample's decode steps (batch 8, 128-token left-padded prompts) from the
    // config of the model that made it.
    {"sample_llama_decode_h100_nsys_floor", "examples/samples/llama_decode_h100.nsys.sqlite", false,
     "tests/data/model_config/llama_decode_sample.config.json", 8, 128},
    {"sample_llama_decode_h100_pytorch", "examples/samples/llama_decode_h100.pytorch.json.gz",
     false},
    {"sample_host_loop_h100_nsys", "examples/samples/host_loop_h100.nsys.sqlite", false},
    {"sample_gpu_memory_h200_nsys", "examples/samples/gpu_memory_h200.nsys.sqlite", false},
    {"sample_gpu_memory_h200_pytorch", "examples/samples/gpu_memory_h200.pytorch.json.gz", false},
    {"graph_decode_node_h100", "tests/data/nsys/graph_decode_node_h100.sqlite.gz", false},
    // The floor per layer: layer_i and head ranges around the program's decode step (batch 8, SDPA
    // over its whole 512-position cache), the sample's model config.
    {"graph_decode_node_h100_floor", "tests/data/nsys/graph_decode_node_h100.sqlite.gz", false,
     "tests/data/model_config/llama_decode_sample.config.json", 8, 512},
    {"nsys_toy_llama_demo", "nsys_toy_llama_demo.sqlite", true},
    {"nsys_toy_llama_inference_sim", "nsys_toy_llama_inference_sim.sqlite", true},
    {"kineto_vllm_b200_tp8_rank0", "kineto_vllm_b200_tp8_rank0.json.gz", true},
    {"kineto_hf_qwen0.5b_h100", "kineto_hf_qwen0.5b_h100.json.gz", true},
    // The floor from the GEMM shapes it records (record_shapes), no config: --context 0 asks for
    // it; one prefill step of 16 prompts of 559 tokens, named from its attention's shapes.
    {"kineto_hf_qwen0.5b_h100_floor", "kineto_hf_qwen0.5b_h100.json.gz", true, nullptr, 0, 0},
    {"kineto_hta_sampled_rank0", "kineto_hta_sampled_rank0.json.gz", true},
    {"kineto_hta_sampled_rank1", "kineto_hta_sampled_rank1.json.gz", true},
    {"kineto_hta_nccl_a100_rank0", "kineto_hta_nccl_a100_rank0.json.gz", true},
    {"kineto_hta_diff_control", "kineto_hta_diff_control.json.gz", true},
    {"kineto_hta_diff_test", "kineto_hta_diff_test.json.gz", true},
    {"kineto_hta_sampled_ranks01", "kineto_hta_sampled_rank0.json.gz", true,
     "kineto_hta_sampled_rank1.json.gz"},
    // TensorRT engines (trtexec and Trex exports; any file of an engine finds its siblings).
    {"trt_resnet_a100_fp16", "trt/resnet_a100_fp16/resnet.onnx.engine.graph.json", true},
    {"trt_resnet_a100_qat", "trt/resnet_a100_qat/resnet-qat.onnx.engine.graph.json", true},
    {"trt_mobilenet_qat", "trt/mobilenet/mobilenet.qat.onnx.engine.graph.json", true},
    {"trt_mobilenet_v2_residuals_qat",
     "trt/mobilenet/mobilenet_v2_residuals.qat.onnx.engine.graph.json", true},
    {"torch_snapshot_history", "tests/data/torch_snapshot/history.pickle", false},
    // transformers generate() with a static cache (compiled, a CUDA graph pool) on an H200, the
    // allocator's history starting after the model was built: the weights come from the dump.
    {"torch_snapshot_hf_static_h200_late",
     "tests/data/torch_snapshot/hf_static_h200_late.pickle.gz", false},
    // GPU memory with NCCL, static memory, cudaMalloc and two stream-ordered pools (H200):
    // `sightline record --cuda-memory-usage` and nsys --cuda-memory-usage=true of one program.
    {"recorder_memory_app_h200", "tests/data/recorder/memory_app_h200.slrec", false},
    {"nsys_memory_app_h200", "tests/data/nsys/memory_app_h200.sqlite", false},
    {"torch2.11_h100_memory_snapshot", "torch2.11_h100_memory_snapshot.pickle", true},
};

using testing::Slurp;

// Readable test names in failure output.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, JsonReportMatches) {
  const GoldenCase& c = GetParam();
  std::string path;
  if (c.shared) {
    const std::string dir = testing::SharedTracesDir();
    if (dir.empty()) GTEST_SKIP() << "../shared/traces absent";
    path = dir + "/" + c.file;
  } else {
    path = std::string(SIGHTLINE_SOURCE_DIR) + "/" + c.file;
  }
  AnalyzeOptions options;
  options.top_n = 100;  // what `--format json` keeps
  options.floor.batch = c.batch;
  options.floor.context = c.context;
  std::vector<std::string> paths = {path};
  if (c.file2 != nullptr) paths.push_back(path.substr(0, path.size() - strlen(c.file)) + c.file2);
  StatusOr<Report> report = AnalyzeFiles(paths, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  // The path differs between machines; pin a stable one.
  for (size_t i = 0; i < report->inputs.size(); ++i) {
    report->inputs[i].path = i == 0 || c.file2 == nullptr ? c.file : c.file2;
  }
  for (InputFile& f : report->files) {
    if (f.path == path) f.path = c.file;
    if (c.file2 != nullptr && f.path.ends_with(c.file2)) f.path = c.file2;
  }
  const std::string json = RenderJsonReport(*report);

  const std::string golden =
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/golden/" + c.name + ".json";
  if (std::getenv("SIGHTLINE_UPDATE_GOLDEN")) {
    std::ofstream(golden, std::ios::binary) << json;
    GTEST_SKIP() << "updated " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden))
      << golden << " missing; run scripts/update-golden.sh and review it";
  const std::string expected = Slurp(golden);
  if (json != expected) {
    const std::string actual = golden + ".actual";
    std::ofstream(actual, std::ios::binary) << json;
    FAIL() << "report differs from " << golden << "; wrote " << actual
           << " (diff them; if the change is intended, run scripts/update-golden.sh)";
  }
}

INSTANTIATE_TEST_SUITE_P(Reports, Golden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace sightline
