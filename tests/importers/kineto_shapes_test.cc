// The shapes PyTorch's profiler records for operators (record_shapes=True: args "Input Dims" and
// "Input type"), kept by the Kineto importer in the trace model's compact form
// (importers/kineto/kineto_shapes.h), and those it cannot read counted.
#include "importers/kineto/kineto_shapes.h"

#include <gtest/gtest.h>

#include <string>

#include "kineto_test_traces.h"

namespace sightline {
namespace {

using kineto::CompactShapes;
using kineto_test::Count;
using kineto_test::KinetoTest;
using kineto_test::MustImport;

TEST(KinetoShapes, CompactForm) {
  using kineto::ShapesRead;
  std::string out;
  ASSERT_EQ(ShapesRead::kKept,
            CompactShapes("[[16, 2048], [8192, 2048], [8192]]",
                          R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])", &out));
  EXPECT_EQ(out, "16x2048,8192x2048,8192|c10::BFloat16;c10::BFloat16;c10::BFloat16");
  // Scalars, a tensor list's nested dims, an empty type.
  ASSERT_EQ(ShapesRead::kKept,
            CompactShapes("[[4, 8], [], [[1, 2], [3, 4]]]", R"(["float", "Scalar", ""])", &out));
  EXPECT_EQ(out, "4x8,,?|float;Scalar;");
  ASSERT_EQ(ShapesRead::kKept, CompactShapes("[]", "[]", &out));
  EXPECT_EQ(out, "|");
  ASSERT_EQ(ShapesRead::kKept, CompactShapes("[[2, 3]]", "", &out));  // no types recorded
  EXPECT_EQ(out, "2x3|");
  // Not such arrays: refused, nothing kept.
  // An operand that is not a list of integers is '?', whatever it holds.
  ASSERT_EQ(ShapesRead::kKept, CompactShapes("[[2,,3], [2.5], null]", "[]", &out));
  EXPECT_EQ(out, "?,?,?|");
  for (const char* bad : {"[[2, 3]", "[[2, 3]] x", "[[2.5]]x", "{}", "[[2, 3]],"}) {
    EXPECT_EQ(CompactShapes(bad, "[]", &out), ShapesRead::kUnreadable) << bad;
    EXPECT_TRUE(out.empty());
  }
  EXPECT_EQ(CompactShapes("[[1]]", R"(["esc\"aped"])", &out), ShapesRead::kUnreadable);
  std::string many = "[";
  for (int i = 0; i <= kineto::kMaxShapeOperands; ++i) many += i == 0 ? "[1]" : ",[1]";
  // Too many operands (no GEMM has them): not kept, and not counted as unreadable.
  EXPECT_EQ(CompactShapes(many + "]", "[]", &out), ShapesRead::kTooManyOperands);
  EXPECT_TRUE(out.empty());
}

TEST_F(KinetoTest, OperatorsKeepTheirShapes) {
  auto op = [](const std::string& name, int ts, const std::string& args) {
    return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "pid": 1, "tid": 1, "ts": )" +
           std::to_string(ts) + R"(, "dur": 5, "args": )" + args + "}";
  };
  const std::string json = kineto_test::TraceJson(
      op("aten::linear", 10,
         R"({"External id": 1, "Input Dims": [[16, 1024], [4096, 1024], []],
             "Input type": ["c10::BFloat16", "c10::BFloat16", ""], "Ev Idx": 3})") +
      ",\n" + op("aten::mm", 20, R"({"Input Dims": "not an array", "Input type": []})") + ",\n" +
      op("aten::add", 30, R"({"External id": 2})") + ",\n" +
      op("aten::cat", 40,
         R"({"Input Dims": [[[1, 2], [1, 2]], []], "Input type": ["TensorList", "Scalar"]})"));
  const Trace t = MustImport(Write("shapes.json", json));
  ASSERT_EQ(t.ranges.size(), 4u);
  EXPECT_EQ(t.str(t.ranges.shapes[0]), "16x1024,4096x1024,|c10::BFloat16;c10::BFloat16;");
  EXPECT_EQ(t.str(t.ranges.shapes[1]), "");  // unreadable: counted
  EXPECT_EQ(t.str(t.ranges.shapes[2]), "");  // none recorded
  EXPECT_EQ(t.str(t.ranges.shapes[3]), "?,|TensorList;Scalar");
  EXPECT_EQ(Count(t, DiagCode::kKinetoShapesUnreadable), 1);
}

// The shipped sample recorded with shapes: its linear keeps them, whatever the order of its keys.
TEST(KinetoShapesSample, BasicTraceKeepsShapes) {
  const Trace t = MustImport(kineto_test::DataPath("basic.json"));
  const Trace sorted = MustImport(kineto_test::DataPath("basic_sorted_keys.json"));
  int64_t with = 0;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    if (t.str(t.ranges.name[i]) != "aten::linear") continue;
    ++with;
    EXPECT_TRUE(t.str(t.ranges.shapes[i]).starts_with("16x4096,4096x4096,4096|"))
        << t.str(t.ranges.shapes[i]);
  }
  EXPECT_GT(with, 0);
  EXPECT_EQ(kineto_test::Dump(t), kineto_test::Dump(sorted));
}

}  // namespace
}  // namespace sightline
