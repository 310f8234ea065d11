// Tests for the diff's verdict per loop (diff/loop_verdicts.h), the saved baseline
// (diff/baseline_file.h: it reads back as written, bad files are refused) and the verdict's section
// (diff/verdict_report.h).
#include "diff/loop_verdicts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "diff/baseline_file.h"
#include "diff/diff_report.h"
#include "diff/step_samples.h"
#include "diff/verdict.h"
#include "diff/verdict_report.h"
#include "facts/kernel_category.h"
#include "reporters/reporter.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"
#include "verdict_loops.h"

namespace sightline {
namespace {

using namespace verdict_test;  // NOLINT(build/namespaces)

std::vector<RunSamples> TwoLoops(const LoopSpec& main, const LoopSpec& graph) {
  RunSamples m = SamplesOf(main), g = SamplesOf(graph);
  g.pattern = "graph_step_N";
  return {m, g};
}

TEST(LoopVerdicts, EachLoopOnItsOwnAndTheSlowerLeads) {
  LoopSpec graph = {.iterations = 30, .attn_ns = 800, .mlp_ns = 2000, .host_ns = 50};
  LoopSpec slower_graph = graph;
  slower_graph.mlp_ns *= 1.2;
  slower_graph.seed = 9;
  const std::vector<std::vector<RunSamples>> before = {TwoLoops({}, graph)};
  const std::vector<std::vector<RunSamples>> after = {TwoLoops({.seed = 2}, slower_graph)};
  VerdictOptions o;
  o.threshold_pct = 5.0;
  const LoopVerdicts lv = ComputeLoopVerdicts(before, after, o);
  ASSERT_EQ(lv.loops.size(), 2u);
  EXPECT_EQ(lv.loops[0].loop, "step N");
  EXPECT_EQ(lv.loops[1].loop, "graph_step_N");
  EXPECT_EQ(lv.loops[0].decision, VerdictDecision::kNotSlower);
  EXPECT_EQ(lv.loops[1].decision, VerdictDecision::kSlower);
  EXPECT_EQ(lv.decision, VerdictDecision::kSlower);
  EXPECT_EQ(lv.lead, 1u);
  EXPECT_NE(lv.lead_why.find("where the main loop `step N` is not slower"), std::string::npos);
  EXPECT_EQ(lv.sentence.rfind("Slower: step time +", 0), 0u) << lv.sentence;
  EXPECT_NE(lv.sentence.find("in `graph_step_N` (median;"), std::string::npos) << lv.sentence;
  EXPECT_NE(lv.sentence.find("Other loop: `step N` not slower"), std::string::npos);
  EXPECT_NE(DecidedBy(lv).find(", in `graph_step_N`"), std::string::npos) << DecidedBy(lv);

  Report report;
  AddVerdictSection(lv, 15, report);
  ASSERT_TRUE(SetGateFromVerdict(lv, report));
  EXPECT_TRUE(report.gate.failed);
  const Section& s = report.sections[0];
  const Table* loops = nullptr;
  for (const Table& t : s.tables) {
    if (t.key == "loops") loops = &t;
  }
  ASSERT_NE(loops, nullptr);
  EXPECT_EQ(loops->rows.size(), 2u);

  // Unchanged: not slower, and the main loop leads.
  const LoopVerdicts same = ComputeLoopVerdicts(
      before,
      {TwoLoops({.seed = 3},
                {.iterations = 30, .attn_ns = 800, .mlp_ns = 2000, .host_ns = 50, .seed = 4})},
      o);
  EXPECT_EQ(same.decision, VerdictDecision::kNotSlower) << same.sentence;
  EXPECT_EQ(same.lead, 0u);
}

TEST(LoopVerdicts, LoopsOnOneSideOrWithTooFewStepsAreNotCompared) {
  VerdictOptions o;
  o.threshold_pct = 5.0;
  // A saved baseline keeps the main loop only: the candidate's graph loop has no partner.
  const LoopVerdicts one_sided =
      ComputeLoopVerdicts({{SamplesOf({})}}, {TwoLoops({.seed = 2}, {.seed = 3})}, o);
  ASSERT_EQ(one_sided.loops.size(), 1u);
  ASSERT_EQ(one_sided.notes.size(), 1u);
  EXPECT_NE(one_sided.notes[0].find("loop `graph_step_N` only in the candidate (40 steps)"),
            std::string::npos)
      << one_sided.notes[0];
  EXPECT_EQ(one_sided.sentence, one_sided.loops[0].sentence);  // no loop named
  EXPECT_EQ(one_sided.sentence.find("`step N`"), std::string::npos);
  const LoopVerdicts few = ComputeLoopVerdicts({TwoLoops({}, {.iterations = 3})},
                                               {TwoLoops({.seed = 2}, {.iterations = 3})}, o);
  ASSERT_EQ(few.loops.size(), 1u);
  ASSERT_EQ(few.notes.size(), 1u);
  EXPECT_NE(few.notes[0].find("3 and 3 steps, fewer than 5 on a side"), std::string::npos)
      << few.notes[0];
}

TEST(BaselineFile, RoundTripKeepsEveryFigure) {
  SavedBaseline saved;
  saved.tool_version = "test";
  saved.iterations_regex = "step \\d+";
  saved.runs.push_back(SamplesOf({.iterations = 8}));
  saved.runs.push_back(SamplesOf({.iterations = 6, .seed = 9}));
  const std::string text = SerializeBaseline(saved);
  EXPECT_TRUE(LooksLikeBaseline(text));
  StatusOr<SavedBaseline> back = ParseBaseline(text, "b.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->iterations_regex, saved.iterations_regex);
  ASSERT_EQ(back->runs.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const RunSamples &x = saved.runs[r], &y = back->runs[r];
    EXPECT_EQ(y.pattern, x.pattern);
    ASSERT_EQ(y.wall_ns, x.wall_ns);  // whole ns: exact
    ASSERT_EQ(y.launched_ns, x.launched_ns);
    ASSERT_EQ(y.parts.size(), x.parts.size());
    for (size_t p = 0; p < x.parts.size(); ++p) {
      EXPECT_EQ(y.parts[p].Key(), x.parts[p].Key());
      for (size_t i = 0; i < x.iterations(); ++i) {
        EXPECT_NEAR(y.part_ns[p][i], x.part_ns[p][i], 0.001);
      }
    }
  }
  // The verdict against the saved baseline is the verdict against the runs themselves.
  const RunSamples after = SamplesOf({.seed = 4});
  EXPECT_NEAR(Verdict(back->runs, {after}, 5.0).median_change_pct.lo,
              Verdict(saved.runs, {after}, 5.0).median_change_pct.lo, 1e-9);
}

TEST(BaselineFile, BadFilesAreRefusedWithWhereAndWhat) {
  const std::string good = SerializeBaseline({"t", "", {SamplesOf({.iterations = 5})}});
  struct Case {
    std::string text, expect;
  };
  std::string newer = good;
  newer.replace(newer.find("\"format_version\": 1"), 19, "\"format_version\": 99");
  std::string negative = good;
  negative.replace(negative.find("\"wall_ns\": ["), 12, "\"wall_ns\": [-5, ");
  std::string unbalanced = good;
  const size_t ns = unbalanced.find("\"ns\": [") + 7;
  unbalanced.replace(ns, 0, "100000, ");
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"{\"format\": \"other\"}", "\"format\""},
      {newer, "newer"},
      {negative, "wall_ns[0]"},
      {unbalanced, "values for"},
  };
  for (const Case& c : cases) {
    StatusOr<SavedBaseline> r = ParseBaseline(c.text, "x.json");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_NE(r.status().message().find("x.json"), std::string::npos) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
}

TEST(VerdictReport, SectionOpensWithTheSentenceAndNoNonFiniteNumbers) {
  const VerdictResult v = Verdict({SamplesOf({})}, {SamplesOf({.mlp_ns = 3300, .seed = 5})}, 5.0);
  Report report;
  AddVerdictSection(v, 15, report);
  ASSERT_EQ(report.sections.size(), 1u);
  const Section& s = report.sections[0];
  EXPECT_EQ(s.key, "diff_verdict");
  ASSERT_FALSE(s.facts.empty());
  EXPECT_EQ(s.facts[0].key, "summary");
  EXPECT_EQ(std::get<std::string>(s.facts[0].value), v.sentence);
  for (const Table& t : s.tables) {
    for (const auto& row : t.rows) {
      for (const Value& cell : row) {
        if (const double* d = std::get_if<double>(&cell)) {
          EXPECT_TRUE(std::isfinite(*d)) << t.key;
        }
      }
    }
  }
  const std::string json = RenderJsonReport(report);
  EXPECT_NE(json.find("\"decision\": \"slower\""), std::string::npos);
  EXPECT_EQ(json.find("nan"), std::string::npos);
  EXPECT_EQ(json.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace sightline
