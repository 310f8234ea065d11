// The floor from recorded GEMM shapes (analyses/floor/gemm_shapes.cc): each operator's FLOPs and
// weight bytes by hand, nested operators counted once, unreadable shapes counted, and a floor per
// step without a model config on a synthetic PyTorch-profiler loop.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyses/floor/floor.h"
#include "analyses/floor/gemm_shapes.h"
#include "report/report.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

StepCost CostOfOp(std::string_view op, std::string_view compact, bool* ok = nullptr) {
  OpShapes s;
  StepCost c;
  int64_t element = 0;
  const bool fits = ParseOpShapes(compact, s) && AddGemmOpCost(GemmOpOf(op), s, c, &element);
  if (ok != nullptr) *ok = fits;
  return c;
}

TEST(GemmShapes, ParsesTheCompactForm) {
  OpShapes s;
  ASSERT_TRUE(
      ParseOpShapes("16x2048,2048x8192,,?|c10::BFloat16;c10::BFloat16;Scalar;TensorList", s));
  ASSERT_EQ(s.dims.size(), 4u);
  EXPECT_EQ(s.dims[0], (std::vector<int64_t>{16, 2048}));
  EXPECT_EQ(s.dims[1], (std::vector<int64_t>{2048, 8192}));
  EXPECT_TRUE(s.dims[2].empty());
  EXPECT_TRUE(s.known[2]);
  EXPECT_FALSE(s.known[3]);
  ASSERT_EQ(s.types.size(), 4u);
  EXPECT_EQ(s.types[2], "Scalar");
  EXPECT_TRUE(ParseOpShapes("|", s));
  EXPECT_TRUE(s.dims.empty());
  EXPECT_FALSE(ParseOpShapes("16x2048", s));      // no types part
  EXPECT_FALSE(ParseOpShapes("16xx2048|", s));    // an empty dimension
  EXPECT_FALSE(ParseOpShapes("16x-2|float", s));  // a negative one
  EXPECT_EQ(ElementBytes("c10::BFloat16"), 2);
  EXPECT_EQ(ElementBytes("float"), 4);
  EXPECT_EQ(ElementBytes("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(ElementBytes("Scalar"), 0);
}

TEST(GemmShapes, EachOperatorsFlopsAndWeightsByHand) {
  // linear: input [4, 1, 1024] (4 tokens), weight [3072, 1024], bias [3072].
  StepCost c = CostOfOp("aten::linear",
                        "4x1x1024,3072x1024,3072|c10::BFloat16;c10::BFloat16;"
                        "c10::BFloat16");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 4 * 3072 * 1024);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 2.0 * (3072 * 1024 + 3072));
  // addmm: bias [N], mat1 [M, K], mat2 [K, N] (the transposed weight); scalars after.
  c = CostOfOp(
      "aten::addmm",
      "1024,8944x1024,1024x1024,,|c10::BFloat16;c10::BFloat16;c10::BFloat16;Scalar;Scalar");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 8944 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 2.0 * (1024 * 1024 + 1024));
  // matmul with a 2-D right operand: a weight; fp32.
  c = CostOfOp("aten::matmul", "4x1x1024,1024x4096|float;float");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 4 * 4096 * 1024);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 4.0 * 1024 * 4096);
  // matmul of two batched tensors (broadcast [1, 32, 1] x [1, 1, 559]), bmm: activations only.
  c = CostOfOp("aten::matmul", "1x32x1,1x1x559|float;float");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 32 * 559 * 1);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 0);
  c = CostOfOp("aten::matmul", "4x8x1x64,8x64x100|c10::Half;c10::Half");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 32 * 1 * 100 * 64);
  c = CostOfOp("aten::bmm", "4x1x64,4x64x100|c10::BFloat16;c10::BFloat16");
  EXPECT_DOUBLE_EQ(c.gemm_flops, 2.0 * 4 * 100 * 64);
  EXPECT_DOUBLE_EQ(c.weight_bytes, 0);
  // Attention at decode: q [4, 8, 1, 64] over 100 keys: 100 pairs per head; K and V read.
  c = CostOfOp("aten::scaled_dot_product_attention",
               "4x8x1x64,4x8x100x64,4x8x100x64,,|c10::BFloat16;c10::BFloat16;c10::BFloat16;;"
               "Scalar");
  EXPECT_DOUBLE_EQ(c.attention_flops, 2.0 * 32 * 100 * 128);
  EXPECT_DOUBLE_EQ(c.kv_read_bytes, 2.0 * 2 * 4 * 8 * 100 * 64);
  // At prefill (L = S = 559): causal, 559 x 560 / 2 pairs per head.
  c = CostOfOp("aten::_scaled_dot_product_flash_attention",
               "16x16x559x64,16x16x559x64,16x16x559x64|c10::BFloat16;c10::BFloat16;c10::BFloat16");
  EXPECT_DOUBLE_EQ(c.attention_flops, 2.0 * 256 * (559.0 * 560 / 2) * 128);
  // Shapes that do not fit the operator add nothing.
  bool ok = true;
  c = CostOfOp("aten::mm", "4x1024,2048x1024|c10::BFloat16;c10::BFloat16", &ok);  // K differs
  EXPECT_FALSE(ok);
  EXPECT_DOUBLE_EQ(c.flops(), 0);
  CostOfOp("aten::mm", "?,1024x1024|c10::BFloat16;c10::BFloat16", &ok);
  EXPECT_FALSE(ok);
  CostOfOp("aten::linear", "4x1024,1024x1024|Scalar;Scalar", &ok);  // no element size
  EXPECT_FALSE(ok);
  EXPECT_EQ(GemmOpOf("aten::add"), GemmOp::kNone);
}

// Per step (1 ms, on an H100: 3,350 GB/s): a linear (with its addmm nested in it), a matmul with
// a weight, attention (its flash backend nested), a bmm, and an mm whose shapes are unreadable.
constexpr char kBf16x2[] = "|c10::BFloat16;c10::BFloat16";
constexpr double kStepWeights = 2.0 * (3072 * 1024 + 3072) + 2.0 * 1024 * 4096;
constexpr double kStepKv = 2.0 * 2 * 4 * 8 * 100 * 64;
constexpr double kStepGemmFlops =
    2.0 * 4 * 3072 * 1024 + 2.0 * 4 * 4096 * 1024 + 2.0 * 4 * 100 * 64;
constexpr double kStepAttentionFlops = 2.0 * 32 * 100 * 128;

Trace ShapesLoop(bool with_shapes) {
  TraceFixture f;
  f.Device(0, "NVIDIA H100 80GB HBM3");
  auto op = [&f, with_shapes](std::string_view name, TimeNs a, TimeNs b, const std::string& s) {
    RangeRow row;
    row.start_ns = a;
    row.end_ns = b;
    row.pid = 1;
    row.tid = 1;
    row.name = f.Intern(name);
    row.kind = RangeKind::kCpuOp;
    if (with_shapes) row.shapes = f.Intern(s);
    f.builder().AddRange(row);
  };
  const std::string bf16x3 = "|c10::BFloat16;c10::BFloat16;c10::BFloat16";
  for (int i = 0; i < 4; ++i) {
    const TimeNs t = 1'000'000 + i * 1'000'000;
    f.Range("ProfilerStep#" + std::to_string(i), t, t + 1'000'000, RangeKind::kUserAnnotation);
    op("aten::linear", t + 1'000, t + 10'000, "4x1x1024,3072x1024,3072" + bf16x3);
    op("aten::addmm", t + 2'000, t + 9'000, "3072,4x1024,1024x3072" + bf16x3);
    op("aten::matmul", t + 11'000, t + 20'000, std::string("4x1x1024,1024x4096") + kBf16x2);
    op("aten::scaled_dot_product_attention", t + 21'000, t + 30'000,
       "4x8x1x64,4x8x100x64,4x8x100x64" + bf16x3);
    op("aten::_scaled_dot_product_flash_attention", t + 22'000, t + 29'000,
       "4x8x1x64,4x8x100x64,4x8x100x64" + bf16x3);
    op("aten::bmm", t + 31'000, t + 40'000, std::string("4x1x64,4x64x100") + kBf16x2);
    op("aten::mm", t + 41'000, t + 50'000, std::string("?,1024x1024") + kBf16x2);
    f.Launch("sm90_xmma_gemm_bf16bf16_bf16f32", t + 3'000, t + 4'000, t + 10'000, t + 400'000);
  }
  return f.Build();
}

TEST(FloorFromShapes, FloorPerStepWithoutAConfig) {
  const Trace trace = ShapesLoop(true);
  AnalyzeOptions o;
  o.floor.context = 0;  // any floor option asks for the floor from shapes
  ASSERT_TRUE(o.floor.asks_for_shapes());
  auto c = Ctx(trace, o);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*c, c->options().floor));
  ASSERT_TRUE(r.computed) << r.not_computed;
  EXPECT_TRUE(r.from_gemm_shapes);
  EXPECT_EQ(r.dtype_bytes, 2);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.shape_ops, 4 * 4);  // linear, matmul, attention, bmm per step
  EXPECT_EQ(r.shape_ops_unreadable, 4);
  EXPECT_NE(r.weights_from.find("GEMM shapes"), std::string::npos);
  for (const FloorStep& s : r.steps) {
    EXPECT_DOUBLE_EQ(s.cost.weight_bytes, kStepWeights);
    EXPECT_DOUBLE_EQ(s.cost.kv_read_bytes, kStepKv);
    EXPECT_DOUBLE_EQ(s.cost.kv_write_bytes, 0);
    EXPECT_DOUBLE_EQ(s.cost.gemm_flops, kStepGemmFlops);
    EXPECT_DOUBLE_EQ(s.cost.attention_flops, kStepAttentionFlops);
    EXPECT_NEAR(s.floor_ns, (kStepWeights + kStepKv) / 3350.0, 1e-9);  // memory-bound
    // The attention's one query per sequence: decode, 4 sequences over 99 cached tokens each.
    EXPECT_EQ(s.work_from, "GEMM shapes");
    EXPECT_EQ(s.family, "decode");
    EXPECT_DOUBLE_EQ(s.work.decode_sequences, 4);
    EXPECT_DOUBLE_EQ(s.work.decode_context, 4 * 99);
  }
  ASSERT_EQ(r.families.size(), 1u);
  EXPECT_EQ(r.families[0].name, "decode, batch 4");
  EXPECT_TRUE(r.layers.empty());  // no per-layer floor from shapes
  // --batch names the steps; the shapes still give their cost.
  o.floor.batch = 16;
  auto b = Ctx(trace, o);
  const FloorResult rb = testing::ValueOrDie(ComputeFloor(*b, b->options().floor));
  ASSERT_TRUE(rb.computed);
  EXPECT_EQ(rb.families[0].name, "decode, batch 16");
  EXPECT_EQ(rb.steps[0].work_from, "options");
  EXPECT_DOUBLE_EQ(rb.steps[0].cost.weight_bytes, kStepWeights);
  // The section says where the bytes came from.
  Report report;
  ASSERT_TRUE(RunFloorSection(*b, 0, report).ok());
  ASSERT_EQ(report.sections.size(), 1u);
  bool said = false;
  for (const Fact& fact : report.sections[0].facts) {
    if (fact.key == "weights_from") said = std::get<std::string>(fact.value).starts_with("GEMM");
  }
  EXPECT_TRUE(said);
}

TEST(FloorFromShapes, NotAskedOrNoShapes) {
  // Not asked: no section, as before.
  const Trace trace = ShapesLoop(true);
  AnalyzeOptions o;
  auto c = Ctx(trace, o);
  Report report;
  ASSERT_TRUE(RunFloorSection(*c, 0, report).ok());
  EXPECT_TRUE(report.sections.empty());
  // Asked of a trace without shapes: a section that says what to record.
  const Trace bare = ShapesLoop(false);
  o.floor.batch = 4;
  auto d = Ctx(bare, o);
  const FloorResult r = testing::ValueOrDie(ComputeFloor(*d, d->options().floor));
  EXPECT_FALSE(r.computed);
  EXPECT_NE(r.not_computed.find("record_shapes"), std::string::npos) << r.not_computed;
  Report said;
  ASSERT_TRUE(RunFloorSection(*d, 0, said).ok());
  ASSERT_EQ(said.sections.size(), 1u);
  ASSERT_FALSE(said.sections[0].notes.empty());
  EXPECT_NE(said.sections[0].notes[0].find("record_shapes"), std::string::npos);
}

}  // namespace
}  // namespace sightline
