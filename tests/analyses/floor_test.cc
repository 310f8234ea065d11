// The floor (analyses/floor/): parameter counts from the shipped configs against the counts their
// publishers state, a step's bytes and FLOPs computed by hand, the expected experts a batch
// touches, the GPU table's matching, and the analysis over a synthetic loop whose split of the
// time above the floor is known.
#include "analyses/floor/floor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "analyses/findings/findings.h"
#include "analyses/floor/gpu_peaks.h"
#include "analyses/floor/step_cost.h"
#include "importers/iteration_log/iteration_log.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/model_config/";

ModelConfig Config(const std::string& name) {
  return testing::ValueOrDie(ReadModelConfig(kData + name));
}

// Llama-3.2-1B from its own numbers: per layer q 2048x2048, k and v 2048x512, o 2048x2048
// (10,485,760), MLP 3 x 2048 x 8192 (50,331,648), two norms (4,096): 60,821,504 x 16 layers =
// 973,144,064; the tied embedding 128,256 x 2048 = 262,668,288; the final norm 2048. Total
// 1,235,814,400 (Meta states 1.23B).
TEST(StepCost, Llama32_1BParameters) {
  const ModelSizes s = SizesOf(Config("llama_3_2_1b.config.json"));
  EXPECT_DOUBLE_EQ(s.attention, 10'485'760);
  EXPECT_DOUBLE_EQ(s.dense_mlp, 50'331'648);
  EXPECT_DOUBLE_EQ(s.lm_head, 0);  // tied
  EXPECT_DOUBLE_EQ(s.total, 1'235'814'400);
  EXPECT_DOUBLE_EQ(s.active, s.total);
  EXPECT_DOUBLE_EQ(s.kv_elements_per_token_layer, 2 * 8 * 64);
}

// Qwen3-30B-A3B (Qwen states 30.5B total, 3.3B activated): per layer attention 18,874,368, norms
// 4,352 (two of 2048, q/k norms of 128), router 262,144, 128 experts of 4,718,592; untied
// embeddings 2 x 311,164,928.
TEST(StepCost, Qwen3MoeParameters) {
  const ModelSizes s = SizesOf(Config("qwen3_30b_a3b.config.json"));
  EXPECT_DOUBLE_EQ(s.total, 30'532'122'624);
  EXPECT_DOUBLE_EQ(s.active, 3'353'032'704);
  EXPECT_EQ(s.moe_layers, 48);
  EXPECT_EQ(s.dense_layers, 0);
}

// DeepSeek-V3 (DeepSeek states 671B total, 37B activated, without its 14B MTP module).
TEST(StepCost, DeepSeekV3Parameters) {
  const ModelSizes s = SizesOf(Config("deepseek_v3.config.json"));
  EXPECT_DOUBLE_EQ(s.total, 671'026'419'200);
  EXPECT_DOUBLE_EQ(s.active, 37'552'297'472);
  EXPECT_EQ(s.dense_layers, 3);
  EXPECT_EQ(s.moe_layers, 58);
  EXPECT_DOUBLE_EQ(s.kv_elements_per_token_layer, 512 + 64);  // the latent and the rope key
}

// Mixtral-8x7B (Mistral states 46.7B total, 12.9B active).
TEST(StepCost, MixtralParameters) {
  const ModelConfig c = testing::ValueOrDie(ParseModelConfig(
      "{\"model_type\":\"mixtral\",\"hidden_size\":4096,\"num_hidden_layers\":32,"
      "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"intermediate_size\":14336,"
      "\"num_local_experts\":8,\"num_experts_per_tok\":2,\"vocab_size\":32000,"
      "\"tie_word_embeddings\":false,\"torch_dtype\":\"bfloat16\"}",
      "mixtral.json"));
  const ModelSizes s = SizesOf(c);
  EXPECT_DOUBLE_EQ(s.total, 46'702'792'704);
  EXPECT_DOUBLE_EQ(s.active, 12'879'925'248);
}

// One decode token of Llama-3.2-1B over 1,000 cached tokens: every weight once (the tied
// embedding serves the logits), 32,768 bytes of K and V per token (2 x 8 heads x 64 x 2 bytes x
// 16 layers), 2 FLOPs per weight of the GEMMs and 2 x 32 heads x (64 + 64) per (query, key) pair
// and layer for attention.
TEST(StepCost, LlamaDecodeByHand) {
  const ModelConfig c = Config("llama_3_2_1b.config.json");
  StepWork w;
  w.decode_sequences = 1;
  w.decode_context = 1000;
  const StepCost cost = CostOf(c, w);
  EXPECT_DOUBLE_EQ(cost.weight_bytes, 2.0 * 1'235'814'400);
  EXPECT_DOUBLE_EQ(cost.kv_read_bytes, 1000.0 * 32'768);
  EXPECT_DOUBLE_EQ(cost.kv_write_bytes, 32'768);
  // Linear weights of the layers (973,078,528) and the lm_head (262,668,288).
  EXPECT_DOUBLE_EQ(cost.gemm_flops, 2.0 * (973'078'528 + 262'668'288));
  EXPECT_DOUBLE_EQ(cost.attention_flops, 2.0 * 32 * 128 * 1001 * 16);
  // 64 sequences read the same weights, 64 times the KV cache and do 64 times the GEMM FLOPs.
  w.decode_sequences = 64;
  w.decode_context = 64'000;
  const StepCost big = CostOf(c, w);
  EXPECT_DOUBLE_EQ(big.weight_bytes, cost.weight_bytes);
  EXPECT_DOUBLE_EQ(big.kv_read_bytes, 64 * cost.kv_read_bytes);
  EXPECT_DOUBLE_EQ(big.gemm_flops, 64 * cost.gemm_flops);
  EXPECT_DOUBLE_EQ(CostOf(c, StepWork{}).bytes(), 0);
}

// A prefill of 2 sequences of 100 tokens: 2 x 100 x 101 / 2 causal pairs, 200 tokens written, no
// cache read, logits for 2 rows.
TEST(StepCost, PrefillIsCausal) {
  const ModelConfig c = Config("llama_3_2_1b.config.json");
  StepWork w;
  w.prefill_sequences = 2;
  w.prefill_tokens = 200;
  const StepCost cost = CostOf(c, w);
  EXPECT_DOUBLE_EQ(cost.attention_flops, 2.0 * 32 * 128 * (2 * 100 * 101 / 2) * 16);
  EXPECT_DOUBLE_EQ(cost.kv_read_bytes, 0);
  EXPECT_DOUBLE_EQ(cost.kv_write_bytes, 200.0 * 32'768);
  EXPECT_DOUBLE_EQ(cost.gemm_flops, 2.0 * 200 * 973'078'528 + 2.0 * 2 * 262'668'288);
}

TEST(StepCost, ExpertsTouchedUnderUniformRouting) {
  EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(128, 8, 1), 8);
  EXPECT_NEAR(ExpectedDistinctExperts(128, 8, 2), 128 * (1 - std::pow(120.0 / 128, 2)), 1e-9);
  EXPECT_NEAR(ExpectedDistinctExperts(128, 8, 1000), 128, 1e-6);
  EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(8, 8, 1), 8);  // every expert
  EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(128, 8, 0), 0);
  // So a decode batch of 1 reads 8 of Qwen3-30B-A3B's 128 experts per layer, a batch of 256 all.
  const ModelConfig c = Config("qwen3_30b_a3b.config.json");
  StepWork one;
  one.decode_sequences = 1;
  StepWork many;
  many.decode_sequences = 256;
  const StepCost a = CostOf(c, one), b = CostOf(c, many);
  EXPECT_DOUBLE_EQ(a.experts_touched, 8);
  EXPECT_NEAR(b.experts_touched, 128, 0.01);
  // Batch 1 reads the active parameters but the untied embedding table (311,164,928), of which it
  // gathers one row; batch 256 nearly every parameter, and 256 rows.
  EXPECT_DOUBLE_EQ(a.weight_bytes / 2, 3'353'032'704.0 - 311'164'928 + 2048);
  EXPECT_NEAR(b.weight_bytes / 2, 30'532'122'624.0 - 311'164'928 + 256 * 2048,
              30'532'122'624 * 0.001);
}

TEST(GpuPeaks, MatchesDeviceNames) {
  auto name = [](const char* device) {
    const GpuPeaks* p = FindGpuPeaks(device);
    return std::string(p ? p->name : "none");
  };
  EXPECT_EQ(name("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(name("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(name("NVIDIA H100 NVL"), "H100 NVL");
  EXPECT_EQ(name("NVIDIA H200"), "H200 SXM");
  EXPECT_EQ(name("NVIDIA H200 NVL"), "H200 NVL");
  EXPECT_EQ(name("NVIDIA B200"), "B200");
  EXPECT_EQ(name("NVIDIA GB200"), "GB200 (B200 GPU)");
  EXPECT_EQ(name("NVIDIA A100-SXM4-40GB"), "A100 40GB");
  EXPECT_EQ(name("NVIDIA A100-PCIE-40GB"), "A100 40GB");
  EXPECT_EQ(name("NVIDIA A100-SXM4-80GB"), "A100 80GB SXM");
  EXPECT_EQ(name("NVIDIA A100 80GB PCIe"), "A100 80GB PCIe");
  EXPECT_EQ(name("NVIDIA L40S"), "L40S");
  EXPECT_EQ(name("NVIDIA L4"), "L4");
  EXPECT_EQ(name("NVIDIA A10"), "A10");
  EXPECT_EQ(name("Tesla T4"), "none");
  EXPECT_EQ(name(""), "none");
  const GpuPeaks& h200 = *FindGpuPeaks("NVIDIA H200");
  EXPECT_DOUBLE_EQ(h200.memory_gbps, 4800);
  EXPECT_DOUBLE_EQ(TensorTflops(h200, 2), 989.5);
  EXPECT_DOUBLE_EQ(TensorTflops(h200, 1), 1979);
  // B200: NVIDIA's per-GPU 7.7 TB/s (docs/analyses/floor.md, "GPU peaks").
  EXPECT_DOUBLE_EQ(FindGpuPeaks("NVIDIA B200")->memory_gbps, 7700);
  EXPECT_DOUBLE_EQ(TensorTflops(*FindGpuPeaks("NVIDIA B200"), 2), 2250);
  // No FP8 on an A100: FP8 weights run at the BF16 rate.
  EXPECT_DOUBLE_EQ(TensorTflops(*FindGpuPeaks("NVIDIA A100-SXM4-80GB"), 1), 312);
}

// Six 2 ms decode steps of Llama-3.2-1B at batch 1 on an H100 SXM (3,350 GB/s): each runs a 1.2
// ms GEMM and a 0.2 ms elementwise kernel and leaves the GPU idle 0.6 ms. The floor is the
// weights and the one token's K and V over the bandwidth. Another `step` scales every time.
Trace DecodeLoop(TimeNs step = 2'000'000) {
  auto at = [step](TimeNs t2ms) { return t2ms * step / 2'000'000; };
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3");
  for (int i = 0; i < 6; ++i) {
    const TimeNs t = 1'000'000 + i * step;
    f.Range("iteration " + std::to_string(i), t, t + step);
    f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", t + 1'000, t + 2'000,
             t + at(100'000), t + at(1'300'000));
    f.Launch("void at::native::vectorized_elementwise_kernel<4>", t + 3'000, t + 4'000,
             t + at(1'300'000), t + at(1'500'000));
  }
  return f.Build();
}

AnalyzeOptions FloorAt(int64_t batch, int64_t context) {
  AnalyzeOptions o;
  o.floor.batch = batch;
  o.floor.context = context;
  return o;
}

// The run's model: Llama 3.2 1B's config (--model-config).
RunInputs Llama32() {
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("llama_3_2_1b.config.json"));
  return in;
}

TEST(Floor, SplitsTheTimeAboveTheFloor) {
  const Trace trace = DecodeLoop();
  auto c = Ctx(trace, FloorAt(1, 0), Llama32());
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed) << r.not_computed;
  EXPECT_EQ(r.peaks.table_entry, "H100 SXM");
  EXPECT_EQ(r.peaks.memory_source.rfind("table: H100 SXM", 0), 0u);
  ASSERT_FALSE(r.steps.empty());
  const double floor_ns = (2.0 * 1'235'814'400 + 32'768) / 3350.0;
  for (const FloorStep& s : r.steps) {
    EXPECT_NEAR(s.floor_ns, floor_ns, 1e-6);
    EXPECT_GT(s.memory_floor_ns, s.compute_floor_ns);  // batch 1 is memory-bound
    EXPECT_EQ(s.wall_ns, 2'000'000);
    EXPECT_EQ(s.busy_ns, 1'400'000);
    EXPECT_EQ(s.idle_ns, 600'000);
    EXPECT_EQ(s.gemm_attention_ns, 1'200'000);
    EXPECT_EQ(s.other_ns, 200'000);
    EXPECT_NEAR(s.gemm_above_ns, 1'200'000 - floor_ns, 1e-6);
  }
  ASSERT_EQ(r.families.size(), 1u);
  const FloorFamily& fam = r.families[0];
  EXPECT_EQ(fam.name, "decode, batch 1");
  EXPECT_NEAR(fam.ratio, 2'000'000 / floor_ns, 1e-9);
  EXPECT_FALSE(fam.compute_bound);
  EXPECT_EQ(fam.holder, "GPU idle");

  // The rule names the family and the part that holds it above its floor.
  std::vector<Finding> out;
  ASSERT_TRUE(RuleFarFromFloor(*c, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "far_from_floor");
  EXPECT_NE(out[0].title.find("decode, batch 1"), std::string::npos);
  EXPECT_NE(out[0].title.find("GPU idle"), std::string::npos);
  EXPECT_EQ(out[0].estimated_savings_ns, static_cast<int64_t>(fam.holder_ns));
}

TEST(Floor, NoFindingNearTheFloorAndMeasuredPeaksWin) {
  // 1.4 ms steps are 1.9x the floor at the datasheet's bandwidth: no finding.
  const Trace trace = DecodeLoop(1'400'000);
  AnalyzeOptions o = FloorAt(1, 0);
  auto c = Ctx(trace, o, Llama32());
  std::vector<Finding> out;
  ASSERT_TRUE(RuleFarFromFloor(*c, out).ok());
  EXPECT_TRUE(out.empty());
  // A measured bandwidth a tenth of the datasheet's raises the floor tenfold.
  o.floor.peak_bandwidth_gbps = 335;
  o.floor.peak_tflops = 500;
  auto m = Ctx(trace, o, Llama32());
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*m, m->options().floor));
  ASSERT_TRUE(r.computed);
  EXPECT_EQ(r.peaks.memory_source, "--peak-bandwidth");
  EXPECT_EQ(r.peaks.tensor_source, "--peak-tflops");
  EXPECT_NEAR(r.steps[0].memory_floor_ns, (2.0 * 1'235'814'400 + 32'768) / 335.0, 1e-6);
}

// Steps faster than their floor mean the config, the work or the peaks are wrong: no part is
// said to hold them, a note says what to check, and the rule stays silent.
TEST(Floor, StepsBelowTheFloorAreSaidToBeSo) {
  const Trace trace = DecodeLoop(500'000);  // 0.5 ms steps, floor 0.74 ms
  auto c = Ctx(trace, FloorAt(1, 0), Llama32());
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed);
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_LT(r.families[0].ratio, 1);
  EXPECT_EQ(r.families[0].holder, "none: below the floor");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("do not describe this trace"), std::string::npos);
  std::vector<Finding> out;
  ASSERT_TRUE(RuleFarFromFloor(*c, out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(Floor, TakesEachStepsWorkFromTheIterationLog) {
  const Trace trace = DecodeLoop();
  std::string text;
  // Steps 0-2 decode 4 sequences over 40 blocks of 16 tokens; 3-5 prefill 512 tokens of 2.
  for (int i = 0; i < 6; ++i) {
    text += "{\"schema_version\":1,\"iteration\":" + std::to_string(i) +
            (i < 3 ? ",\"generation_requests\":4,\"context_requests\":0,\"kv_blocks_used\":40,"
                     "\"kv_tokens_per_block\":16}\n"
                   : ",\"generation_requests\":0,\"context_requests\":2,"
                     "\"context_tokens\":512}\n");
  }
  RunInputs in = Llama32();
  in.iteration_log = std::make_shared<const IterationLog>(
      testing::ValueOrDie(ParseIterationLog(text, "log.jsonl")));
  auto c = Ctx(trace, {}, in);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed) << r.not_computed;
  ASSERT_EQ(r.families.size(), 2u);
  EXPECT_EQ(r.families[0].name, "decode, batch 4");
  EXPECT_EQ(r.families[1].name, "prefill, 512 tokens in 2 sequences");
  for (const FloorStep& s : r.steps) {
    EXPECT_EQ(s.work_from, "iteration log");
    if (s.family == "decode") {
      EXPECT_DOUBLE_EQ(s.work.decode_context, 640);  // 40 blocks x 16 tokens
      EXPECT_DOUBLE_EQ(s.cost.kv_read_bytes, 640.0 * 32'768);
    } else {
      EXPECT_DOUBLE_EQ(s.work.prefill_tokens, 512);
    }
  }
}

TEST(Floor, SaysWhyThereIsNoFloor) {
  const Trace trace = DecodeLoop();
  AnalyzeOptions o = FloorAt(0, -1);  // no batch, no log
  auto c = Ctx(trace, o, Llama32());
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  EXPECT_FALSE(r.computed);
  EXPECT_NE(r.not_computed.find("--batch"), std::string::npos);
  // An unknown GPU without a bandwidth given.
  TraceFixture f;
  f.Device(0, "Tesla T4");
  f.Range("iteration 0", 0, 1000).Launch("gemm", 1, 2, 10, 20);
  const Trace t4 = f.Build();
  auto d = Ctx(t4, FloorAt(1, 0), Llama32());
  const FloorResult u = testing::ValueOrDie(ComputeFloor(*d, d->options().floor));
  EXPECT_FALSE(u.computed);
  EXPECT_NE(u.not_computed.find("--peak-bandwidth"), std::string::npos);
  // Without a model config there is no section at all.
  Report report;
  auto e = Ctx(trace);
  ASSERT_TRUE(RunFloorSection(*e, 0, report).ok());
  EXPECT_TRUE(report.sections.empty());
}

}  // namespace
}  // namespace sightline
