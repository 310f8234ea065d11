// Tests for the TensorRT engine stage (trt/): the readers of trtexec's and Trex's exports, the
// engine analysis (types, precisions, reformats, fused parts, latency as trtexec states it), the
// report, the diff and its gate, bad input, and the CLI routing. tests/data/trt/tiny.engine.* and
// tiny_int8.engine.* are small hand-written engines (5 and 6 layers); the shared ResNet and
// MobileNet exports are checked where ../shared/traces is present.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "analyses/findings/findings.h"
#include "base/file_io.h"
#include "importers/trt_engine/trt_engine.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"
#include "trt/trt_analysis.h"
#include "trt/trt_diff.h"
#include "trt/trt_report.h"

namespace sightline {
namespace {

const std::string kDir = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/trt/";
const std::string kTiny = kDir + "tiny.engine.graph.json";
const std::string kTinyInt8 = kDir + "tiny_int8.engine.graph.json";

TrtEngineAnalysis Analyze(const std::string& path) {
  StatusOr<TrtEngine> e = ReadTrtEngine(path);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  if (!e.ok()) return {};
  return testing::ValueOrDie(AnalyzeTrtEngine(*e));
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

const TrtGroupRow* FindGroup(const std::vector<TrtGroupRow>& groups, const std::string& key) {
  for (const TrtGroupRow& g : groups) {
    if (g.key == key) return &g;
  }
  return nullptr;
}

TEST(TrtNames, PrecisionFromTheFormat) {
  EXPECT_EQ(TrtPrecisionOfFormat("Row major linear FP32"), "FP32");
  EXPECT_EQ(TrtPrecisionOfFormat("Channel major FP16 format where channel % 8 == 0"), "FP16");
  EXPECT_EQ(TrtPrecisionOfFormat("Thirty-two wide channel vectorized row major Int8 format"),
            "INT8");
  EXPECT_EQ(TrtPrecisionOfFormat("Row major linear BF16 format"), "BF16");
  EXPECT_EQ(TrtPrecisionOfFormat("Row major linear Int32"), "INT32");
  EXPECT_EQ(TrtPrecisionOfFormat("Unknown format"), "");
  EXPECT_EQ(TrtPrecisionOfFormat("FP160 format"), "");  // whole words only
}

TEST(TrtNames, FusedNamesSplitIntoTheirParts) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitFusedName("Conv_5 + Add_6 + Relu_7"), (V{"Conv_5", "Add_6", "Relu_7"}));
  EXPECT_EQ(SplitFusedName("Conv_0"), (V{"Conv_0"}));
  EXPECT_EQ(SplitFusedName("w + QuantizeLinear_8 + Conv_12 + PWN(Clip_16)"),
            (V{"w", "QuantizeLinear_8", "Conv_12", "Clip_16"}));
  EXPECT_EQ(SplitFusedName("PWN(PWN(Sigmoid_3), Mul_4 + Add_5)"),
            (V{"Sigmoid_3", "Mul_4", "Add_5"}));
  EXPECT_EQ(SplitFusedName("{ForeignNode[MatMul_5...Add_9]}"), (V{"MatMul_5...Add_9"}));
  // A reformat copy node names the layer it feeds: not a fusion.
  EXPECT_EQ(SplitFusedName("Reformatting CopyNode for Input Tensor 0 to Conv_5 + Add_6").size(),
            1u);
  // An unbalanced bracket keeps the rest whole rather than splitting inside it.
  EXPECT_EQ(SplitFusedName("PWN(a + b"), (V{"PWN(a + b"}));
  EXPECT_EQ(SplitLayerMetadata("[ONNX Layer: /l0/Conv]\x1e[ONNX Layer: /l0/Relu]"),
            (V{"/l0/Conv", "/l0/Relu"}));
}

TEST(TrtFiles, KindsAreRecognisedByContentAndSiblingsByPrefix) {
  EXPECT_EQ(TrtFileKindOf(kTiny), TrtFileKind::kGraph);
  EXPECT_EQ(TrtFileKindOf(kDir + "tiny.engine.profile.json"), TrtFileKind::kProfile);
  EXPECT_EQ(TrtFileKindOf(kDir + "tiny.engine.timing.json"), TrtFileKind::kTiming);
  EXPECT_EQ(TrtFileKindOf(kDir + "tiny.engine.profile.metadata.json"),
            TrtFileKind::kProfileMetadata);
  EXPECT_EQ(TrtFileKindOf(std::string(SIGHTLINE_SOURCE_DIR) +
                          "/examples/samples/llama_decode_h100.pytorch.json.gz"),
            TrtFileKind::kNone);
  EXPECT_EQ(TrtFileKindOf("/nonexistent/x.graph.json"), TrtFileKind::kNone);
  EXPECT_EQ(TrtEnginePrefix("/a/E.profile.metadata.json"), "/a/E");
  EXPECT_EQ(TrtEnginePrefix("/a/E.timing.json.gz"), "/a/E");
  EXPECT_EQ(TrtEnginePrefix("/a/E.metadata.json"), "/a/E");
  EXPECT_EQ(TrtEnginePrefix("/a/trace.json"), "");
  // Any file of the engine finds the same four.
  for (const char* file : {"tiny.engine.graph.json", "tiny.engine.profile.json",
                           "tiny.engine.timing.json", "tiny.engine.profile.metadata.json"}) {
    StatusOr<TrtEngine> e = ReadTrtEngine(kDir + file);
    ASSERT_TRUE(e.ok()) << file << ": " << e.status().ToString();
    EXPECT_EQ(e->name, "tiny.engine");
    EXPECT_EQ(e->files.size(), 4u) << file;
    EXPECT_TRUE(e->graph && e->profile && e->timing && e->metadata) << file;
    EXPECT_TRUE(e->diagnostics.empty());
  }
}

TEST(TrtAnalysis, TypesPrecisionsAndReformats) {
  const TrtEngineAnalysis a = Analyze(kTiny);
  ASSERT_EQ(a.layers.size(), 5u);
  EXPECT_NEAR(a.total_ms, 1.0, 1e-12);
  EXPECT_EQ(a.profile_runs, 10);
  const TrtGroupRow* conv = FindGroup(a.by_type, "CaskConvolution");
  ASSERT_NE(conv, nullptr);
  EXPECT_NEAR(conv->share_pct, 40.0, 1e-9);
  EXPECT_EQ(a.by_type.front().key, "CaskConvolution");  // largest first
  const TrtGroupRow* fp32 = FindGroup(a.by_precision, "FP32");
  ASSERT_NE(fp32, nullptr);
  EXPECT_EQ(fp32->layers, 1);  // the output reformat
  EXPECT_NEAR(fp32->time_ms, 0.15, 1e-12);
  EXPECT_EQ(FindGroup(a.by_precision, "FP16")->layers, 4);
  // Two reformats, 0.25 ms of 1 ms; the input one feeds the convolution, the output one the
  // engine's output binding.
  EXPECT_EQ(a.reformat_layers, 2);
  EXPECT_NEAR(a.reformat_share_pct, 25.0, 1e-9);
  ASSERT_EQ(a.reformats.size(), 2u);
  EXPECT_EQ(a.reformats[0].name.substr(0, 37), "Reformatting CopyNode for Output Tens");
  EXPECT_EQ(a.reformats[0].producer, "{ForeignNode[MatMul_5...Add_9]}");
  EXPECT_EQ(a.reformats[0].consumers, std::vector<std::string>{"(output binding output)"});
  EXPECT_EQ(a.reformats[1].producer, "(input binding input)");
  EXPECT_EQ(a.reformats[1].consumers, std::vector<std::string>{"conv1 + relu1"});
  EXPECT_EQ(a.reformats[1].from_precision, "FP32");
  EXPECT_EQ(a.reformats[1].to_precision, "FP16");
  // conv1 + relu1, the pointwise pair and the Myelin region.
  EXPECT_EQ(a.fused_layers, 3);
  EXPECT_EQ(a.weights_bytes, 220);  // 110 halves
}

TEST(TrtAnalysis, LatencyAfterWarmupAsTrtexecStatesIt) {
  const TrtLatency l = Analyze(kTiny).latency;
  ASSERT_TRUE(l.known);
  EXPECT_EQ(l.records, 8);
  EXPECT_EQ(l.warmup_excluded, 3);  // compute started before 200 ms
  EXPECT_TRUE(l.warmup_from_metadata);
  EXPECT_EQ(l.compute.n, 5);
  EXPECT_NEAR(l.compute.mean, 1.2, 1e-12);
  EXPECT_NEAR(l.compute.median, 1.2, 1e-12);
  EXPECT_NEAR(l.compute.p90, 1.36, 1e-12);  // interpolated between 1.3 and 1.4
  EXPECT_NEAR(l.compute.max, 1.4, 1e-12);
  EXPECT_NEAR(l.enqueue.mean, 0.2, 1e-9);
  // 5 inferences from the first H2D start (200 ms) to the last D2H end (209.4 ms).
  EXPECT_NEAR(l.throughput_qps, 5 / 9.4 * 1e3, 1e-6);
  // The metadata's figures: 7 of GPU compute, and the throughput; trtexec's p90 is a sample.
  EXPECT_EQ(l.checks.size(), 8u);
  EXPECT_EQ(l.mismatches, 0);
}

TEST(TrtReport, SectionsAndTheReformatFinding) {
  StatusOr<Report> r = AnalyzeFiles({kDir + "tiny.engine.timing.json"}, AnalyzeOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->inputs.size(), 1u);
  EXPECT_EQ(r->inputs[0].format, "tensorrt-engine");
  std::vector<std::string> keys;
  for (const Section& s : r->sections) keys.push_back(s.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"trt_engine", "trt_layers", "trt_reformats", "trt_latency"}));
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].id, "trt_reformats");
  EXPECT_EQ(r->findings[0].severity, Severity::kHigh);  // 25% of the layer time
  // 0.25 ms per inference, the 5 inferences measured beside it (not 1.25 ms over all of them).
  EXPECT_NEAR(static_cast<double>(r->findings[0].estimated_savings_ns), 0.25e6, 1);
  bool runs_beside = false;
  for (const Fact& e : r->findings[0].evidence) {
    runs_beside |= e.key == "inferences" && e.value == Value(int64_t{5});
  }
  EXPECT_TRUE(runs_beside);
  // A host-bound run: enqueue longer than compute.
  TrtEngine e = *ReadTrtEngine(kTiny);
  for (TrtInference& x : e.timing->inferences) x.end_enq_ms = x.start_enq_ms + 2 * x.compute_ms;
  e.metadata.reset();
  TrtEngineAnalysis a = *AnalyzeTrtEngine(e);
  std::vector<Finding> host;
  ASSERT_TRUE(RuleTrtHostBound(TrtEngineResult{&e, &a}, host).ok());
  bool found = false;
  for (const Finding& f : host) {
    if (f.id != "trt_host_bound") continue;
    found = true;
    EXPECT_EQ(f.severity, Severity::kHigh);
    EXPECT_NE(f.recommendation.find("--useCudaGraph"), std::string::npos);
  }
  EXPECT_TRUE(found);
  // Copies as long as compute: the transfers finding.
  for (TrtInference& x : e.timing->inferences) x.h2d_ms = x.compute_ms;
  a = *AnalyzeTrtEngine(e);
  std::vector<Finding> copies;
  ASSERT_TRUE(RuleTrtDataTransfers(TrtEngineResult{&e, &a}, copies).ok());
  found = false;
  for (const Finding& f : copies) {
    if (f.id == "trt_data_transfers") {
      found = true;
      EXPECT_NE(f.recommendation.find("--noDataTransfers"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
}

TEST(TrtReaders, WrongTypesAreCountedAndDroppedNotCoerced) {
  Diagnostics d;
  StatusOr<TrtProfile> p = ParseTrtProfile(
      R"([{"count": 2}, {"name": "a", "averageMs": 0.5}, {"name": "b", "averageMs": "0.7"},
          {"name": 3, "averageMs": 0.1}, {"name": "c", "averageMs": 0.2, "medianMs": "x"}])",
      "p.json", d);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->rows.size(), 2u);  // b (a string time) and the unnamed row are dropped
  EXPECT_EQ(p->rows[0].name, "a");
  EXPECT_DOUBLE_EQ(p->rows[1].median_ms, 0.2);  // a wrong-typed median falls back to the average
  EXPECT_EQ(d.Count(DiagCode::kTrtFieldWrongType), 3);
  EXPECT_EQ(d.Count(DiagCode::kTrtRecordIncomplete), 2);

  Diagnostics g;
  StatusOr<TrtGraph> graph = ParseTrtGraph(
      R"({"Layers": [{"Name": "x", "LayerType": 7, "TacticName": ["t"],
          "Outputs": [{"Name": "o", "Dimensions": [1, "2"], "Format/Datatype": "Row major linear FP32"}]},
          {"LayerType": "NoOp"}, "just_a_name"], "Bindings": ["in", 5]})",
      "g.json", g);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  ASSERT_EQ(graph->layers.size(), 2u);
  EXPECT_EQ(graph->layers[0].type, "");
  EXPECT_EQ(graph->layers[0].tactic, "");
  EXPECT_TRUE(graph->layers[0].outputs[0].dims.empty());
  EXPECT_EQ(graph->layers[0].outputs[0].precision, "FP32");
  EXPECT_TRUE(graph->names_only);
  EXPECT_EQ(graph->bindings, std::vector<std::string>{"in"});
  EXPECT_EQ(g.Count(DiagCode::kTrtFieldWrongType), 4);  // LayerType, TacticName, dims, binding
  EXPECT_EQ(g.Count(DiagCode::kTrtRecordIncomplete), 1);

  Diagnostics t;
  StatusOr<TrtTiming> timing = ParseTrtTiming(
      R"([{"startEnqMs": 1, "endEnqMs": 2, "startComputeMs": 2, "endComputeMs": 3,
           "computeMs": 1, "latencyMs": 1},
          {"startEnqMs": 1, "endEnqMs": 2, "startComputeMs": 2, "endComputeMs": 3,
           "computeMs": -1, "latencyMs": 1}])",
      "t.json", t);
  ASSERT_TRUE(timing.ok());
  EXPECT_EQ(timing->inferences.size(), 1u);
  EXPECT_EQ(t.Count(DiagCode::kTrtRecordIncomplete), 1);
}

TEST(TrtReaders, AnSmCountThatIsNotACountIsDropped) {
  // fuzz_trt found SMs = 1e300 cast to an integer (undefined); now it is a wrong-typed field.
  for (const char* sms : {"1e300", "-4", "13.5", "132"}) {
    Diagnostics d;
    TrtMetadata m;
    const std::string json =
        std::string(R"({"device_information": {"Selected Device": "H100", "SMs": )") + sms + "}}";
    ASSERT_TRUE(ParseTrtMetadata(json, TrtFileKind::kProfileMetadata, "m.json", m, d).ok()) << sms;
    const bool good = std::string(sms) == "132";
    EXPECT_EQ(m.sms, good ? 132 : 0) << sms;
    EXPECT_EQ(d.Count(DiagCode::kTrtFieldWrongType), good ? 0 : 1) << sms;
  }
}

TEST(TrtReaders, BadFilesSayWhatIsWrong) {
  Diagnostics d;
  StatusOr<TrtGraph> g = ParseTrtGraph("{\"Layers\": [", "E.graph.json", d);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(g.status().message().find("E.graph.json: not valid JSON"), std::string::npos);
  EXPECT_NE(g.status().message().find("--exportLayerInfo"), std::string::npos);
  StatusOr<TrtProfile> p = ParseTrtProfile(R"([{"count": 0}])", "E.profile.json", d);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("count"), std::string::npos);
  EXPECT_FALSE(ParseTrtTiming("[]", "E.timing.json", d).ok());

  // A sibling whose content is not what its name says: an error naming it, exit 2, no output.
  const std::string dir = testing::MakeTempDir();
  std::filesystem::copy_file(kTiny, dir + "/x.engine.graph.json");
  Write(dir + "/x.engine.profile.json", R"({"traceEvents": []})");
  StatusOr<TrtEngine> e = ReadTrtEngine(dir + "/x.engine.graph.json");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("x.engine.profile.json: named like a TensorRT profile"),
            std::string::npos)
      << e.status().message();
  testing::CliResult cli =
      testing::RunSightline("analyze '" + dir + "/x.engine.graph.json' -o '" + dir + "/out.txt'");
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("x.engine.profile.json"), std::string::npos) << cli.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.txt"));
  // A profile of another build: its unknown layer is kept, counted and shown without a type.
  Write(dir + "/x.engine.profile.json",
        R"([{"count": 1}, {"name": "conv1 + relu1", "averageMs": 0.4},
            {"name": "other_layer", "averageMs": 0.1}])");
  StatusOr<TrtEngine> other = ReadTrtEngine(dir + "/x.engine.graph.json");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(other->diagnostics.Count(DiagCode::kTrtProfileLayerNotInGraph), 1);
  const TrtEngineAnalysis oa = *AnalyzeTrtEngine(*other);
  EXPECT_EQ(oa.profile_only, 1);
  EXPECT_EQ(oa.graph_only, 4);
  EXPECT_NEAR(oa.total_ms, 0.5, 1e-12);
  EXPECT_EQ(oa.layers.back().name, "other_layer");
  EXPECT_EQ(oa.layers.back().type, "");
  // A profile alone: its layers, with no complaint about a graph that is not there.
  StatusOr<TrtEngine> alone = ReadTrtEngine(dir + "/x.engine.profile.json");
  ASSERT_TRUE(alone.ok());
  std::filesystem::remove(dir + "/x.engine.graph.json");
  alone = ReadTrtEngine(dir + "/x.engine.profile.json");
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE(alone->graph.has_value());
  EXPECT_TRUE(alone->diagnostics.empty());
  EXPECT_EQ(AnalyzeTrtEngine(*alone)->profile_only, 0);
  std::filesystem::copy_file(kTiny, dir + "/x.engine.graph.json");
  // A profile that is valid JSON but is cut mid-row.
  Write(dir + "/x.engine.profile.json", "[{\"count\": 1}, {\"name\": \"a\", \"averageMs\": 0.1}");
  cli = testing::RunSightline("analyze '" + dir + "/x.engine.graph.json'");
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("not valid JSON"), std::string::npos) << cli.err;
  // An engine export together with a trace.
  cli = testing::RunSightline("analyze '" + kTiny + "' '" + std::string(SIGHTLINE_SOURCE_DIR) +
                              "/examples/samples/llama_decode_h100.pytorch.json.gz'");
  EXPECT_EQ(cli.exit_code, 2);
  EXPECT_NE(cli.err.find("not both"), std::string::npos) << cli.err;
}

TEST(TrtDiff, LayersMatchByNameThenByTheirParts) {
  const TrtEngineAnalysis b = Analyze(kTiny), a = Analyze(kTinyInt8);
  std::map<std::string, std::string> how;  // candidate layer -> how matched
  int vanished = 0, appeared = 0;
  for (const TrtLayerMatch& m : MatchTrtLayers(b, a)) {
    if (m.baseline >= 0 && m.candidate >= 0) {
      how[a.layers[m.candidate].name] = m.how;
    } else {
      (m.baseline >= 0 ? vanished : appeared) += 1;
    }
  }
  EXPECT_EQ(how["conv1.weight + QuantizeLinear_1 + conv1 + relu1 + Add_2"], "parts");
  EXPECT_EQ(how["PWN(PWN(Sigmoid_3), Mul_4)"], "name");
  EXPECT_EQ(how.size(), 4u);
  EXPECT_EQ(vanished, 1);  // the input reformat, renamed after the layer it feeds
  EXPECT_EQ(appeared, 2);  // that, and QuantizeLinear_1

  Report r;
  r.inputs.resize(2);
  TrtDiffOptions o;
  o.fail_if_slower_pct = 10;
  AddTrtDiff(b, a, o, r);
  // Per-layer sum 1.0 -> 0.85 ms, but the reformats grew from 0.25 to 0.3 ms (+20%).
  EXPECT_TRUE(r.gate.failed);
  EXPECT_NE(r.gate.message.find("type Reformat +20.0%"), std::string::npos) << r.gate.message;
  EXPECT_EQ(r.gate.message.find("sum of layer times"), std::string::npos);
  const Section& s = r.sections.front();
  ASSERT_EQ(s.key, "trt_diff");
  bool precision_row = false;
  for (const Table& t : s.tables) {
    if (t.key != "precision_changes") continue;
    ASSERT_EQ(t.rows.size(), 1u);
    EXPECT_EQ(std::get<std::string>(t.rows[0][2]), "FP16");
    EXPECT_EQ(std::get<std::string>(t.rows[0][3]), "INT8");
    precision_row = true;
  }
  EXPECT_TRUE(precision_row);
  o.fail_if_slower_pct = 25;
  Report lenient;
  lenient.inputs.resize(2);
  AddTrtDiff(b, a, o, lenient);
  EXPECT_FALSE(lenient.gate.failed);
}

TEST(TrtDiff, CliGateAndRefusesAMix) {
  testing::CliResult same = testing::RunSightline("diff '" + kTiny + "' '" + kDir +
                                                  "tiny.engine.profile.json' --fail-if-slower 0");
  EXPECT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("TensorRT engines: candidate against baseline"), std::string::npos);
  testing::CliResult worse = testing::RunSightline("diff '" + kTiny + "' '" + kTinyInt8 +
                                                   "' --fail-if-slower 10 --format json");
  EXPECT_EQ(worse.exit_code, 1) << worse.err;
  EXPECT_NE(worse.err.find("type Reformat"), std::string::npos) << worse.err;
  EXPECT_NE(worse.out.find("\"key\": \"trt_gate\""), std::string::npos);
  testing::CliResult mixed =
      testing::RunSightline("diff '" + kTiny + "' '" + std::string(SIGHTLINE_SOURCE_DIR) +
                            "/examples/samples/llama_decode_h100.pytorch.json.gz'");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("two TensorRT engines"), std::string::npos) << mixed.err;
}

TEST(TrtCli, AnyFileOfTheEngineInEveryFormat) {
  const std::string dir = testing::MakeTempDir();
  for (const char* format : {"text", "json", "html"}) {
    const std::string out = dir + "/r." + format;
    testing::CliResult r =
        testing::RunSightline("analyze '" + kDir + "tiny.engine.profile.metadata.json' --format " +
                              format + " -o '" + out + "'");
    ASSERT_EQ(r.exit_code, 0) << format << ": " << r.err;
    StatusOr<std::string> text = ReadFileToString(out);
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("conv1 + relu1"), std::string::npos) << format;
  }
}

TEST(TrtReport, TheEngineGraphHasEveryLayerAndTensor) {
  StatusOr<Report> r = AnalyzeFiles({kTiny}, AnalyzeOptions{});
  ASSERT_TRUE(r.ok());
  const Graph* g = nullptr;
  for (const Section& s : r->sections) {
    if (!s.graphs.empty()) g = &s.graphs.front();
  }
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->nodes.size(), 7u);  // input, 5 layers, output
  EXPECT_TRUE(g->nodes.front().terminal);
  EXPECT_EQ(g->nodes.front().label, "input input");
  EXPECT_EQ(g->nodes.back().label, "output output");
  EXPECT_EQ(g->edges.size(), 6u);  // a chain
  for (const GraphEdge& e : g->edges) EXPECT_LT(e.from, e.to);
  EXPECT_DOUBLE_EQ(g->nodes[2].heat, 1.0);  // the convolution holds the largest share
  EXPECT_NEAR(g->nodes[1].heat, 0.25, 1e-9);
  const std::string html = RenderHtmlReport(*r);
  EXPECT_NE(html.find("class=\"dag\""), std::string::npos);
  const std::string json = RenderJsonReport(*r);
  EXPECT_NE(json.find("\"engine_graph\""), std::string::npos);
}

// The shared exports: ResNet-50 FP16 against its QAT build on one A100.
TEST(TrtShared, ResnetFp16AgainstQatByLayerType) {
  const std::string shared = testing::SharedTracesDir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces absent";
  const std::string fp16 = shared + "/trt/resnet_a100_fp16/resnet.onnx.engine.graph.json";
  const std::string qat = shared + "/trt/resnet_a100_qat/resnet-qat.onnx.engine.graph.json";
  if (!std::filesystem::exists(fp16) || !std::filesystem::exists(qat)) {
    GTEST_SKIP() << "trt exports absent";
  }
  const TrtEngineAnalysis b = Analyze(fp16), a = Analyze(qat);
  // trtexec's own summary (Trex's profile metadata) agrees with the timing export, recomputed.
  EXPECT_EQ(b.latency.mismatches, 0);
  EXPECT_EQ(a.latency.mismatches, 0);
  EXPECT_GE(b.latency.checks.size(), 20u);
  // The convolutions get faster in INT8; the reformats the QAT engine adds eat the gain.
  const TrtGroupRow* conv_b = FindGroup(b.by_type, "CaskConvolution");
  const TrtGroupRow* conv_a = FindGroup(a.by_type, "CaskConvolution");
  ASSERT_TRUE(conv_b && conv_a);
  EXPECT_LT(conv_a->time_ms, conv_b->time_ms);
  EXPECT_GT(a.reformat_ms, b.reformat_ms);
  EXPECT_GT(FindGroup(a.by_precision, "INT8")->layers, 0);
  int64_t by_order = 0;
  for (const TrtLayerMatch& m : MatchTrtLayers(b, a)) by_order += m.how == "type order";
  EXPECT_EQ(by_order, conv_a->layers);  // the 21 convolutions pair up in engine order
}

}  // namespace
}  // namespace sightline
