// The floor per layer (analyses/floor/floor_layers.cc): the names that say a layer, the parts'
// costs adding up to the step's, and the shipped graph_decode sample (tests/data/nsys/
// graph_decode_node_h100.sqlite.gz: 8 layer_i ranges and a head range around the code, each step
// captured in a CUDA graph and replayed, then run eagerly) whose kernels per range the program
// fixes: 33 per layer and 13 in the head, the same in a replay as in an eager step.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "analyses/findings/findings.h"
#include "analyses/floor/floor.h"
#include "analyses/floor/step_cost.h"
#include "importers/importer.h"
#include "importers/iteration_log/iteration_log.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

const std::string kData = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/";

ModelConfig Config(const std::string& name) {
  return testing::ValueOrDie(ReadModelConfig(kData + "model_config/" + name));
}

TEST(FloorLayers, NamesThatSayALayer) {
  auto is = [](const char* name, ModelPart part, int64_t index) {
    const ModelPartName p = ParseModelPart(name);
    return p.part == part && p.index == index;
  };
  EXPECT_TRUE(is("layer_3", ModelPart::kLayer, 3));
  EXPECT_TRUE(is("Layer 12", ModelPart::kLayer, 12));
  EXPECT_TRUE(is("model.layers.7", ModelPart::kLayer, 7));
  EXPECT_TRUE(is("nn.Module: LlamaDecoderLayer_5", ModelPart::kLayer, 5));
  EXPECT_TRUE(is("nn.Module: Qwen3MoeDecoderLayer_0", ModelPart::kLayer, 0));
  EXPECT_TRUE(is("transformer.h.2", ModelPart::kLayer, 2));
  EXPECT_TRUE(is("blocks.4", ModelPart::kLayer, 4));
  EXPECT_TRUE(is("lm_head", ModelPart::kHead, -1));
  EXPECT_TRUE(is("head", ModelPart::kHead, -1));
  EXPECT_TRUE(is("model.embed_tokens", ModelPart::kEmbedding, -1));
  EXPECT_TRUE(is("embed", ModelPart::kEmbedding, -1));
  EXPECT_TRUE(is("nn.Module: Embedding_0", ModelPart::kEmbedding, -1));
  EXPECT_TRUE(is("model.layers.3.mlp.experts.17", ModelPart::kExpert, 17));
  EXPECT_TRUE(is("expert_5", ModelPart::kExpert, 5));
  // Not layers: sublayers, other modules, steps, rotary embeddings.
  for (const char* name :
       {"attention", "mlp", "model.layers.3.mlp", "nn.Module: Linear_4",
        "nn.Module: LlamaRotaryEmbedding_0", "nn.Module: LlamaRMSNorm_3", "iteration_3",
        "decode_step_4", "graph_step_2", "capture", "embed_3", "layer_99999999999"}) {
    EXPECT_EQ(ParseModelPart(name).part, ModelPart::kNone) << name;
  }
}

// The layers, the head and the embedding add up to the step (untied embeddings), for a dense
// model and a MoE one, at decode and at prefill.
TEST(FloorLayers, PartsAddUpToTheStep) {
  for (const char* name : {"llama_decode_sample.config.json", "qwen3_30b_a3b.config.json"}) {
    const ModelConfig c = Config(name);
    ASSERT_FALSE(c.tied_embeddings) << name;
    StepWork decode;
    decode.decode_sequences = 8;
    decode.decode_context = 8 * 512;
    StepWork prefill;
    prefill.prefill_sequences = 2;
    prefill.prefill_tokens = 300;
    for (const StepWork& w : {decode, prefill}) {
      const StepCost step = CostOf(c, w);
      StepCost sum = HeadCostOf(c, w);
      const StepCost e = EmbeddingCostOf(c, w);
      sum.weight_bytes += e.weight_bytes;
      for (int64_t l = 0; l < c.num_layers; ++l) {
        const StepCost p = LayerCostOf(c, w, l);
        sum.weight_bytes += p.weight_bytes;
        sum.kv_read_bytes += p.kv_read_bytes;
        sum.kv_write_bytes += p.kv_write_bytes;
        sum.gemm_flops += p.gemm_flops;
        sum.attention_flops += p.attention_flops;
      }
      EXPECT_NEAR(sum.weight_bytes, step.weight_bytes, step.weight_bytes * 1e-12) << name;
      EXPECT_NEAR(sum.kv_read_bytes, step.kv_read_bytes, 1e-3) << name;
      EXPECT_NEAR(sum.kv_write_bytes, step.kv_write_bytes, 1e-3) << name;
      EXPECT_NEAR(sum.gemm_flops, step.gemm_flops, step.gemm_flops * 1e-12) << name;
      EXPECT_NEAR(sum.attention_flops, step.attention_flops, step.attention_flops * 1e-12 + 1e-3)
          << name;
    }
  }
  // One routed expert: its weights, and k / experts of the tokens' FLOPs through it.
  const ModelConfig q = Config("qwen3_30b_a3b.config.json");
  StepWork w;
  w.decode_sequences = 64;
  const StepCost e = ExpertCostOf(q, w);
  EXPECT_DOUBLE_EQ(e.weight_bytes, 2.0 * 4'718'592);
  EXPECT_DOUBLE_EQ(e.gemm_flops, 2.0 * 64 * (8.0 / 128) * 4'718'592);
  EXPECT_EQ(LayerCostOf(q, w, 48).bytes(), 0);  // no layer 48
}

// One layer of the sample's model at batch 8 over a 512-position cache: q and o 1024 x 1024, k
// and v 1024 x 256, the MLP 3 x 1024 x 2816, two norms of 1024 (11,274,240 weights, bf16), and
// 4,096 cached tokens read and 8 written at 2 x 4 heads x 64 x 2 bytes; the head reads the
// 32,000 x 1024 lm_head and the final norm.
constexpr double kLayerBytes = 2.0 * 11'274'240 + (4096.0 + 8) * 1024;
constexpr double kHeadBytes = 2.0 * (32'000 * 1024 + 1024);
constexpr double kH100 = 3350;  // GB/s, the table's H100 SXM

FloorResult FloorOfGraphDecode(const Trace& trace, const std::string& iterations) {
  AnalyzeOptions o;
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("llama_decode_sample.config.json"));
  o.floor.batch = 8;
  o.floor.context = 512;
  if (!iterations.empty()) o.iterations_regex = iterations;
  auto c = Ctx(trace, o, in);
  return testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
}

void ExpectTheProgramsLayers(const FloorResult& r, bool graph) {
  ASSERT_TRUE(r.computed) << r.not_computed;
  ASSERT_EQ(r.layers.size(), 9u);  // 8 layers and the head; the embedding runs in no range
  EXPECT_EQ(r.layers_family, "decode, batch 8");
  for (int i = 0; i < 8; ++i) {
    const FloorLayer& l = r.layers[static_cast<size_t>(i)];
    EXPECT_EQ(l.name, "layer " + std::to_string(i));
    EXPECT_EQ(l.kernels, 33 * l.steps) << l.name;
    EXPECT_NEAR(l.floor_ns, kLayerBytes / kH100, 1e-6);
    EXPECT_NEAR(l.weight_bytes, 2.0 * 11'274'240, 1e-6);
    EXPECT_FALSE(l.compute_bound);
    EXPECT_GT(l.ratio, 1);
    EXPECT_GE(l.span_ns, l.busy_ns);
    EXPECT_NEAR(l.idle_ns + l.busy_ns, l.span_ns, l.span_ns * 0.2);  // medians of each
  }
  const FloorLayer& head = r.layers[8];
  EXPECT_EQ(head.name, "head");
  EXPECT_EQ(head.kernels, 13 * head.steps);
  EXPECT_NEAR(head.floor_ns, kHeadBytes / kH100, 1e-6);
  // Every kernel of a step is placed but two launched before the first layer's range: the
  // embedding's gather and the attention mask's comparison.
  const int64_t steps = r.layers[0].steps;
  EXPECT_EQ(r.family_kernels, 279 * steps);
  EXPECT_EQ(r.placed_by_range + r.placed_by_graph_path, 277 * steps);
  EXPECT_EQ(graph ? r.placed_by_range : r.placed_by_graph_path, 0);
}

TEST(FloorLayers, GraphDecodeSampleEagerAndReplayed) {
  const Trace trace =
      testing::ValueOrDie(ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz"));
  // The default steps are the eager ones (eager_step_N): kernels placed by their launch.
  const FloorResult eager = FloorOfGraphDecode(trace, "");
  ExpectTheProgramsLayers(eager, false);
  // The graph replays: kernels placed by the ranges open at their node's capture.
  const FloorResult graph = FloorOfGraphDecode(trace, "graph_step_.*");
  ExpectTheProgramsLayers(graph, true);
  // The eager layers wait on the host between their kernels; the replayed ones much less.
  EXPECT_GT(eager.layers[0].idle_ns, 10 * graph.layers[0].idle_ns);
  EXPECT_EQ(eager.layers[0].holder, "GPU idle");
  ASSERT_NE(eager.TopLayer(), nullptr);
  EXPECT_EQ(eager.TopLayer()->part, ModelPart::kLayer);
}

// The finding names the layer with the most time above its floor.
TEST(FloorLayers, FindingNamesTheLayer) {
  const Trace trace =
      testing::ValueOrDie(ImportTrace(kData + "nsys/graph_decode_node_h100.sqlite.gz"));
  AnalyzeOptions o;
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("llama_decode_sample.config.json"));
  o.floor.batch = 8;
  o.floor.context = 512;
  auto c = Ctx(trace, o, in);
  const FloorResult* r = testing::ValueOrDie(CachedFloor(*c));
  const FloorLayer* top = r->TopLayer();
  ASSERT_NE(top, nullptr);
  std::vector<Finding> out;
  ASSERT_TRUE(RuleFarFromFloor(*c, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].title.find(top->name + " is the furthest above its floor"), std::string::npos)
      << out[0].title;
  bool has_layer = false;
  for (const Fact& e : out[0].evidence) has_layer |= e.key == "layer";
  EXPECT_TRUE(has_layer);
}

// PyTorch module frames (with_modules) around the launches, a MoE layer with named experts, and
// layers the config does not have.
TEST(FloorLayers, ModuleFramesAndExperts) {
  TraceFixture f;
  f.Device(0, "NVIDIA H200");
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = 1'000'000 + i * 1'000'000;
    f.Range("ProfilerStep#" + std::to_string(i), t, t + 1'000'000, RangeKind::kUserAnnotation);
    f.Range("nn.Module: Qwen3MoeDecoderLayer_0", t + 100, t + 400'000, RangeKind::kPythonFunction);
    f.Range("experts.3", t + 200'000, t + 300'000, RangeKind::kUserAnnotation);
    f.Range("nn.Module: Qwen3MoeDecoderLayer_77", t + 500'000, t + 600'000,
            RangeKind::kPythonFunction);
    // Layer 0: a GEMM in attention, an expert's GEMM; layer 77 is beyond the config's 48.
    f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32", t + 1'000, t + 2'000, t + 10'000, t + 60'000);
    f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32", t + 210'000, t + 211'000, t + 220'000, t + 250'000);
    f.Launch("void at::native::vectorized_elementwise_kernel<4>", t + 510'000, t + 511'000,
             t + 520'000, t + 530'000);
  }
  const Trace trace = f.Build();
  AnalyzeOptions o;
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("qwen3_30b_a3b.config.json"));
  o.floor.batch = 1;
  o.floor.context = 0;
  auto c = Ctx(trace, o, in);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed) << r.not_computed;
  ASSERT_EQ(r.layers.size(), 2u);
  EXPECT_EQ(r.layers[0].name, "layer 0");
  EXPECT_EQ(r.layers[0].kernels, 2 * r.layers[0].steps);
  EXPECT_DOUBLE_EQ(r.layers[0].span_ns, 240'000);  // 10 us .. 250 us
  EXPECT_DOUBLE_EQ(r.layers[0].busy_ns, 80'000);
  EXPECT_EQ(r.layers[1].name, "layer 0 expert 3");
  EXPECT_DOUBLE_EQ(r.layers[1].busy_ns, 30'000);
  EXPECT_NEAR(r.layers[1].weight_bytes, 2.0 * 4'718'592, 1e-6);
  bool said = false;
  for (const std::string& n : r.notes)
    said |= n.find("not in the model config") != std::string::npos;
  EXPECT_TRUE(said);
}

// Sampled GPU metrics (nsys --gpu-metrics-devices, sightline record --gpu-metrics): the DRAM
// read + write and tensor activity over each step's window and over each layer's kernel spans.
// Samples every 100 us: inside a kernel read 50%, write 20%, tensor 30%; outside 10%, 0, 0.
TEST(FloorLayers, SampledMetricsPerStepAndLayer) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3");
  const StringId read = f.Intern("DRAM Read Bandwidth [Throughput %]");
  const StringId write = f.Intern("DRAM Write Bandwidth [Throughput %]");
  const StringId tensor = f.Intern("Tensor Active [Throughput %]");
  for (int i = 0; i < 3; ++i) {
    const TimeNs t = i * 1'000'000;
    f.Range("iteration " + std::to_string(i), t, t + 1'000'000);
    f.Range("layer_0", t + 1'000, t + 50'000);
    f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32", t + 2'000, t + 3'000, t + 100'000, t + 500'000);
  }
  for (TimeNs t = 0; t < 3'000'000; t += 100'000) {
    const bool in = t % 1'000'000 >= 100'000 && t % 1'000'000 < 500'000;
    f.builder().AddCounter(t, 0, read, in ? 50.0 : 10.0);
    f.builder().AddCounter(t, 0, write, in ? 20.0 : 0.0);
    f.builder().AddCounter(t, 0, tensor, in ? 30.0 : 0.0);
  }
  const Trace trace = f.Build();
  AnalyzeOptions o;
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("llama_decode_sample.config.json"));
  o.floor.batch = 1;
  auto c = Ctx(trace, o, in);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed) << r.not_computed;
  ASSERT_FALSE(r.steps.empty());
  for (const FloorStep& s : r.steps) {
    EXPECT_NEAR(s.dram_pct, (4 * 70.0 + 6 * 10.0) / 10, 1e-9);  // 4 of 10 samples in the kernel
    EXPECT_NEAR(s.tensor_pct, 4 * 30.0 / 10, 1e-9);
  }
  ASSERT_EQ(r.layers.size(), 1u);
  EXPECT_NEAR(r.layers[0].dram_pct, 70, 1e-9);
  EXPECT_NEAR(r.layers[0].tensor_pct, 30, 1e-9);
  // Without samples: no figures.
  TraceFixture g;
  g.Device(0, "NVIDIA H100 80GB HBM3");
  g.Range("iteration 0", 0, 1'000'000).Range("iteration 1", 1'000'000, 2'000'000);
  g.Range("iteration 2", 2'000'000, 3'000'000);
  g.Launch("gemm", 1, 2, 10, 500);
  const Trace bare = g.Build();
  auto d = Ctx(bare, o, in);
  const FloorResult u = testing::ValueOrDie(ComputeFloor(*d, d->options().floor));
  ASSERT_TRUE(u.computed);
  for (const FloorStep& s : u.steps) EXPECT_LT(s.dram_pct, 0);
}

// Every family has its own layers: three decode steps (an iteration log says 4 sequences over 640
// cached tokens) and three longer prefill steps (2 sequences, 512 tokens), each with a layer_0
// and a layer_1 range around a GEMM. The prefill family has the most time: table "layers"; the
// decode family's parts follow, each against its floor at the decode work.
TEST(FloorLayers, EveryFamilyHasItsLayers) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3");
  std::string log;
  for (int i = 0; i < 6; ++i) {
    const bool prefill = i >= 3;
    const TimeNs t = 1'000'000 + i * 4'000'000;
    const TimeNs len = prefill ? 3'000'000 : 1'000'000;
    f.Range("iteration " + std::to_string(i), t, t + len);
    for (int l = 0; l < 2; ++l) {
      const TimeNs at = t + l * len / 2;
      f.Range("layer_" + std::to_string(l), at + 1'000, at + 20'000);
      f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32", at + 2'000, at + 3'000, at + 100'000,
               at + len / 2 - 100'000);
    }
    log += "{\"schema_version\":1,\"iteration\":" + std::to_string(i) +
           (prefill ? ",\"generation_requests\":0,\"context_requests\":2,\"context_tokens\":512}\n"
                    : ",\"generation_requests\":4,\"context_requests\":0,\"kv_blocks_used\":40,"
                      "\"kv_tokens_per_block\":16}\n");
  }
  const Trace trace = f.Build();
  AnalyzeOptions o;
  RunInputs in;
  const ModelConfig config = Config("llama_3_2_1b.config.json");
  in.model = std::make_shared<const ModelConfig>(config);
  in.iteration_log = std::make_shared<const IterationLog>(
      testing::ValueOrDie(ParseIterationLog(log, "log.jsonl")));
  auto c = Ctx(trace, o, in);
  const FloorResult* r = testing::ValueOrDie(CachedFloor(*c));
  ASSERT_TRUE(r->computed) << r->not_computed;
  EXPECT_EQ(r->layers_family, "prefill, 512 tokens in 2 sequences");
  ASSERT_EQ(r->layers.size(), 2u);
  ASSERT_EQ(r->other_layers.size(), 1u);
  const FloorFamilyLayers& decode = r->other_layers[0];
  EXPECT_EQ(decode.family, "decode, batch 4");
  EXPECT_EQ(decode.family_kernels, 6);  // 3 steps x 2 kernels, all placed by their ranges
  EXPECT_EQ(decode.placed_by_range, 6);
  ASSERT_EQ(decode.layers.size(), 2u);
  StepWork w;
  w.decode_sequences = 4;
  w.decode_context = 640;
  for (int l = 0; l < 2; ++l) {
    const FloorLayer& d = decode.layers[static_cast<size_t>(l)];
    EXPECT_EQ(d.name, "layer " + std::to_string(l));
    EXPECT_EQ(d.steps, 3);
    EXPECT_DOUBLE_EQ(d.span_ns, 300'000);  // 100 us .. 400 us of its half of the step
    const StepCost cost = LayerCostOf(config, w, l);
    EXPECT_NEAR(d.weight_bytes, cost.weight_bytes, 1e-6);
    EXPECT_NEAR(d.floor_ns, cost.bytes() / 3350.0, 1e-6);  // memory-bound at batch 4
    // The prefill family's layer reads the same weights but computes far more.
    EXPECT_NEAR(r->layers[static_cast<size_t>(l)].weight_bytes, cost.weight_bytes, 1e-6);
    EXPECT_GT(r->layers[static_cast<size_t>(l)].flops, 100 * d.flops);
  }
  EXPECT_EQ(r->TopLayerOf("decode, batch 4"), decode.TopLayer());
  EXPECT_EQ(r->TopLayerOf(r->layers_family), r->TopLayer());
  EXPECT_EQ(r->TopLayerOf("no such family"), nullptr);
  // The section: table "layers" for the prefill steps, "layers_decode" for the decode steps.
  Report report;
  ASSERT_TRUE(RunFloorSection(*c, 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  std::vector<std::string> keys;
  for (const Table& t : report.sections[0].tables) keys.push_back(t.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"families", "steps", "layers", "layers_decode"}));
  EXPECT_EQ(report.sections[0].tables.back().title, "Layers against their floor: decode, batch 4");
  EXPECT_NE(report.sections[0].tables.back().note.find("\"decode, batch 4\""), std::string::npos);
}

TEST(FloorLayers, NoteWhenNoRangeNamesALayer) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3");
  for (int i = 0; i < 3; ++i) {
    const TimeNs t = i * 1'000'000;
    f.Range("iteration " + std::to_string(i), t, t + 1'000'000);
    f.Launch("gemm", t + 1, t + 2, t + 10, t + 500'000);
  }
  const Trace trace = f.Build();
  AnalyzeOptions o;
  RunInputs in;
  in.model = std::make_shared<const ModelConfig>(Config("llama_decode_sample.config.json"));
  o.floor.batch = 1;
  auto c = Ctx(trace, o, in);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed);
  EXPECT_TRUE(r.layers.empty());
  EXPECT_EQ(r.TopLayer(), nullptr);
  bool said = false;
  for (const std::string& n : r.notes) said |= n.starts_with("No per-layer floor");
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace sightline
