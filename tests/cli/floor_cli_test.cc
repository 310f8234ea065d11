// `sightline analyze --model-config`: the floor section and its finding on the shipped nsys
// sample with its model's config; a config that is wrong and a file of another kind are refused
// with exit 2 and a message that says what to do; the floor's options without a config ask for
// the floor from the trace's GEMM shapes, and a trace without them gets a section saying so.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/cli_runner.h"

namespace sightline {
namespace {

using testing::RunSightline;

const std::string kRoot = SIGHTLINE_SOURCE_DIR;
const std::string kSample = "'" + kRoot + "/examples/samples/llama_decode_h100.nsys.sqlite'";
const std::string kConfig =
    "'" + kRoot + "/tests/data/model_config/llama_decode_sample.config.json'";

TEST(FloorCli, SectionAndFindingOnTheSample) {
  testing::CliResult r = RunSightline("analyze " + kSample + " --model-config " + kConfig +
                                      " --batch 8 --context 128");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("== How far from the hardware"), std::string::npos);
  EXPECT_NE(r.out.find("table: H100 SXM"), std::string::npos);
  EXPECT_NE(r.out.find("decode, batch 8 steps take"), std::string::npos);
  // Measured peaks replace the table's, and the report says so.
  testing::CliResult m = RunSightline("analyze " + kSample + " --model-config " + kConfig +
                                      " --batch 8 --peak-bandwidth 2900 --peak-tflops 700");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("--peak-bandwidth"), std::string::npos);
  EXPECT_NE(m.out.find("2900.00 GB/s"), std::string::npos);
  // Without a model config there is no floor section.
  testing::CliResult none = RunSightline("analyze " + kSample);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("How far from the hardware"), std::string::npos);
}

TEST(FloorCli, RefusesWhatItCannotUse) {
  const std::string dir = testing::MakeTempDir();
  const std::string bad = dir + "/config.json";
  std::ofstream(bad) << "{\"model_type\":\"llama\",\"hidden_size\":-4,\"num_hidden_layers\":2}";
  testing::CliResult r = RunSightline("analyze " + kSample + " --model-config '" + bad + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("\"hidden_size\" is -4"), std::string::npos) << r.err;
  // A trace given as the config.
  testing::CliResult t = RunSightline("analyze " + kSample + " --model-config " + kSample);
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("--model-config takes the kind 'model config'"), std::string::npos) << t.err;
  // The floor's options without a config, on a trace that records no GEMM shapes: a section
  // that says what to give.
  testing::CliResult b = RunSightline("analyze " + kSample + " --batch 8");
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("records no GEMM shapes"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("record_shapes=True"), std::string::npos);
  // Two configs.
  testing::CliResult two =
      RunSightline("analyze " + kSample + " " + kConfig + " --model-config " + kConfig);
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("both model configs"), std::string::npos) << two.err;
}

// Without a config: the weights of a memory snapshot of the same kind of program (transformers'
// generate(), Llama-3.2-1B's shape with 4 layers: param_bytes 1,011,912,704, and two 512-byte
// blocks of the rotary embedding's buffers) are the bytes each step reads; the section says where
// they came from. A trace given as the snapshot, and a snapshot with no weights, are refused.
TEST(FloorCli, WeightsFromAMemorySnapshot) {
  const std::string snap =
      "'" + kRoot + "/tests/data/torch_snapshot/hf_static_h200_late.pickle.gz'";
  testing::CliResult r =
      RunSightline("analyze " + kSample + " --weights-snapshot " + snap + " --batch 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("== How far from the hardware"), std::string::npos);
  EXPECT_NE(r.out.find("the memory snapshot's weights (hf_static_h200_late.pickle.gz"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("unknown (no --model-config)"), std::string::npos);
  // 1,011,913,728 B over the H100 SXM's 3,350 GB/s.
  EXPECT_NE(r.out.find("302.06 us"), std::string::npos);
  EXPECT_NE(r.out.find("no KV cache, no FLOPs"), std::string::npos);
  // With a config too, the config drives the floor and the snapshot's weights stand beside it.
  testing::CliResult both = RunSightline("analyze " + kSample + " --model-config " + kConfig +
                                         " --weights-snapshot " + snap + " --batch 8");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_NE(both.out.find("the model config (llama_decode_sample.config.json)"), std::string::npos);
  EXPECT_NE(both.out.find("Weights in the memory snapshot"), std::string::npos);
  // Not a snapshot.
  testing::CliResult t = RunSightline("analyze " + kSample + " --weights-snapshot " + kSample);
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("--weights-snapshot takes a PyTorch memory snapshot"), std::string::npos)
      << t.err;
  // A snapshot without weights (a script's tensors, no model).
  testing::CliResult none = RunSightline("analyze " + kSample + " --weights-snapshot '" + kRoot +
                                         "/tests/data/torch_snapshot/h200_plain.pickle' --batch 8");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("is a weight"), std::string::npos) << none.err;
}

// Without a config or a snapshot, the GEMM shapes a PyTorch profiler trace records: the shipped
// basic.json's one step runs an aten::linear of [16, 4096] x [4096, 4096] + bias (bf16), so the
// step reads 4096 x 4096 x 2 + 4096 x 2 = 33,562,624 B (10.02 us at the H100 SXM's 3,350 GB/s) and
// computes 2 x 16 x 4096 x 4096 FLOPs.
TEST(FloorCli, FloorFromGemmShapes) {
  const std::string basic = "'" + kRoot + "/tests/data/kineto/basic.json'";
  testing::CliResult r = RunSightline("analyze " + basic + " --batch 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GEMM shapes (record_shapes): 1 aten GEMM and attention operators in 1 "
                       "steps"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("10.02 us"), std::string::npos);
  EXPECT_NE(r.out.find("5.369e+08"), std::string::npos);
  // Not asked: no section.
  testing::CliResult none = RunSightline("analyze " + basic);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.find("How far from the hardware"), std::string::npos);
}

}  // namespace
}  // namespace sightline
