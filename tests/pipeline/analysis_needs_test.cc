// Tests for the registry's needs (AnalysisEntry::needs, analyses/registry.cc): the declared graph
// names only entries and has no cycle, a read of an undeclared whole result fails
// (ResultsCache::Reader), and every entry runs on the shipped samples with only what it declares
// computed before it -- so a declaration that leaves out a result the entry reads fails here.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "analyses/memory/memory.h"
#include "facts/results_cache.h"
#include "importers/importer.h"
#include "importers/model_config/model_config.h"
#include "pipeline/pipeline.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

Status RunNothing(AnalysisContext&, int, Report&) { return Status::Ok(); }

// Reads the memory analysis's whole result, as a rule reading it would.
Status RunReadingMemory(AnalysisContext& context, int, Report&) {
  return CachedMemory(context).status();
}

TEST(AnalysisNeeds, TheRegistryNamesOnlyEntriesAndHasNoCycle) {
  const std::vector<AnalysisEntry>& analyses = Analyses();
  StatusOr<std::vector<std::vector<size_t>>> needs = AnalysisNeeds(analyses);
  ASSERT_TRUE(needs.ok()) << needs.status().ToString();
  ASSERT_EQ(needs->size(), analyses.size());
  for (size_t i = 0; i < analyses.size(); ++i) {
    ASSERT_EQ((*needs)[i].size(), analyses[i].needs.size()) << analyses[i].name;
    for (size_t k = 0; k < (*needs)[i].size(); ++k) {
      EXPECT_STREQ(analyses[(*needs)[i][k]].name, analyses[i].needs[k]);
      EXPECT_NE((*needs)[i][k], i) << analyses[i].name << " needs itself";
    }
  }
}

TEST(AnalysisNeeds, AnUnknownNameAndACycleAreRefused) {
  const std::vector<AnalysisEntry> unknown = {{"a", "", &RunNothing, {"no_such_analysis"}}};
  StatusOr<std::vector<std::vector<size_t>>> u = AnalysisNeeds(unknown);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("'no_such_analysis', which is no analysis"),
            std::string::npos)
      << u.status().ToString();

  const std::vector<AnalysisEntry> cycle = {{"a", "", &RunNothing, {"c"}},
                                            {"b", "", &RunNothing, {"a"}},
                                            {"c", "", &RunNothing, {"b"}},
                                            {"d", "", &RunNothing, {}}};
  StatusOr<std::vector<std::vector<size_t>>> c = AnalysisNeeds(cycle);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("form a cycle"), std::string::npos) << c.status().ToString();

  const std::vector<AnalysisEntry> self = {{"a", "", &RunNothing, {"a"}}};
  EXPECT_FALSE(AnalysisNeeds(self).ok());

  // A diamond is no cycle.
  const std::vector<AnalysisEntry> diamond = {{"a", "", &RunNothing, {"b", "c"}},
                                              {"b", "", &RunNothing, {"d"}},
                                              {"c", "", &RunNothing, {"d"}},
                                              {"d", "", &RunNothing, {}}};
  EXPECT_TRUE(AnalysisNeeds(diamond).ok());
}

TEST(AnalysisNeeds, ReadingAnUndeclaredResultFails) {
  const Trace t = testing::TraceFixture().Build();
  const AnalysisEntry undeclared = {"reader", "", &RunReadingMemory, {}};
  const AnalysisEntry declared = {"reader", "", &RunReadingMemory, {"memory"}};
  Report report;
  {
    AnalysisContext context(t);
    Status s = RunAnalysis(undeclared, context, 0, report);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("analysis 'reader' reads the result of 'memory' without declaring"),
              std::string::npos)
        << s.ToString();
    // Refused before computing: the result is not there for the next reader either.
    EXPECT_EQ(context.results().Find<MemoryResult>(), nullptr);
    // Outside an entry (a test, an exporter) nothing is checked.
    EXPECT_TRUE(CachedMemory(context).ok());
  }
  {
    AnalysisContext context(t);
    EXPECT_TRUE(RunAnalysis(declared, context, 0, report).ok());
  }
  // The analysis reads its own result freely.
  {
    AnalysisContext context(t);
    const AnalysisEntry own = {"memory", "", &RunReadingMemory, {}};
    EXPECT_TRUE(RunAnalysis(own, context, 0, report).ok());
  }
}

// Runs entry `i` of `analyses` after the entries it needs, each of those after its own needs; the
// declared needs entry `i` read go to `asked`.
Status RunWithNeeds(const std::vector<AnalysisEntry>& analyses,
                    const std::vector<std::vector<size_t>>& needs, size_t i,
                    AnalysisContext& context, std::vector<bool>& done,
                    std::vector<std::string>* asked) {
  for (size_t j : needs[i]) {
    if (done[j]) continue;
    RETURN_IF_ERROR(RunWithNeeds(analyses, needs, j, context, done, nullptr));
  }
  Report report;
  report.inputs.emplace_back();
  done[i] = true;
  return RunAnalysis(analyses[i], context, 0, report, asked).WithPrefix(analyses[i].name);
}

// Each entry alone on a fresh context of each shipped sample, after only what it declares: an
// undeclared read fails (the samples have GIL, memory and GPU metric data, so the rules that read
// threads, memory and GPU metrics all get to their reads). And no declaration is wider than the
// reads: every declared need is read on some sample (a need declared but never read would only
// hold the entry back). A model config is given (the floor and its rule read it), as
// --model-config with --batch would.
TEST(AnalysisNeeds, EveryEntryRunsWithOnlyItsNeedsComputed) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  StatusOr<ModelConfig> config =
      ReadModelConfig(std::string(SIGHTLINE_SOURCE_DIR) +
                      "/tests/data/model_config/llama_decode_sample.config.json");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  AnalyzeOptions options;
  options.floor.batch = 8;
  RunInputs inputs;
  inputs.model = std::make_shared<const ModelConfig>(*config);
  const std::vector<AnalysisEntry>& analyses = Analyses();
  StatusOr<std::vector<std::vector<size_t>>> needs = AnalysisNeeds(analyses);
  ASSERT_TRUE(needs.ok()) << needs.status().ToString();
  std::vector<std::set<std::string>> read(analyses.size());
  for (const char* sample : {"llama_decode_h100.nsys.sqlite", "llama_decode_h100.pytorch.json.gz",
                             "host_loop_h100.nsys.sqlite", "gpu_memory_h200.nsys.sqlite",
                             "gpu_memory_h200.pytorch.json.gz", "serving_loop_h100.slrec"}) {
    StatusOr<Trace> trace = ImportTrace(dir + sample);
    ASSERT_TRUE(trace.ok()) << sample << ": " << trace.status().ToString();
    for (size_t i = 0; i < analyses.size(); ++i) {
      AnalysisContext context(*trace, options, inputs);
      std::vector<bool> done(analyses.size(), false);
      std::vector<std::string> asked;
      Status s = RunWithNeeds(analyses, *needs, i, context, done, &asked);
      EXPECT_TRUE(s.ok()) << sample << ": " << s.ToString();
      read[i].insert(asked.begin(), asked.end());
    }
  }
  for (size_t i = 0; i < analyses.size(); ++i) {
    for (const char* need : analyses[i].needs) {
      EXPECT_TRUE(read[i].count(need))
          << analyses[i].name << " declares '" << need << "' but read it on no sample";
    }
  }
}

// The scheduler's log: when each entry of a synthetic registry started and ended, as sequence
// numbers of one counter.
std::atomic<int> g_clock{0};
std::vector<std::atomic<int>> g_started(8), g_ended(8);

template <int I>
Status RunLogged(AnalysisContext&, int, Report& report) {
  g_started[I] = g_clock++;
  std::this_thread::sleep_for(std::chrono::microseconds(I % 3 == 0 ? 2'000 : 200));
  report.AddSection("s" + std::to_string(I), "entry", 0);
  g_ended[I] = g_clock++;
  return Status::Ok();
}

// RunAnalyses (AnalyzeTrace's scheduler) starts an entry only after every entry it needs has
// ended, on any number of threads, and alone follows the registry's order where the needs allow.
TEST(AnalysisNeeds, ThePipelineStartsAnEntryAfterItsNeeds) {
  // "late" needs an entry after it in the registry; "d" waits for a chain of two.
  const std::vector<AnalysisEntry> analyses = {
      {"late", "", &RunLogged<0>, {"c"}}, {"a", "", &RunLogged<1>, {}},
      {"b", "", &RunLogged<2>, {"a"}},    {"c", "", &RunLogged<3>, {"a", "b"}},
      {"d", "", &RunLogged<4>, {"c"}},    {"e", "", &RunLogged<5>, {}},
      {"f", "", &RunLogged<6>, {}},       {"g", "", &RunLogged<7>, {"f", "late"}},
  };
  StatusOr<std::vector<std::vector<size_t>>> needs = AnalysisNeeds(analyses);
  ASSERT_TRUE(needs.ok()) << needs.status().ToString();
  const Trace t = testing::TraceFixture().Build();
  for (int threads : {1, 2, 3, 8}) {
    for (int round = 0; round < 10; ++round) {
      for (auto& s : g_started) s = -1;
      for (auto& e : g_ended) e = -1;
      AnalysisContext context(t);
      std::vector<Report> parts;
      std::vector<Status> status;
      ASSERT_TRUE(RunAnalyses(analyses, context, 0, threads, parts, status).ok());
      ASSERT_EQ(parts.size(), analyses.size());
      for (size_t i = 0; i < analyses.size(); ++i) {
        EXPECT_TRUE(status[i].ok());
        ASSERT_EQ(parts[i].sections.size(), 1u) << analyses[i].name << " ran once";
        EXPECT_EQ(parts[i].sections[0].key, "s" + std::to_string(i));
        ASSERT_GE(g_started[i], 0) << analyses[i].name;
        for (size_t j : (*needs)[i]) {
          EXPECT_LT(g_ended[j], g_started[i])
              << analyses[i].name << " started before " << analyses[j].name << " ended, " << threads
              << " threads";
        }
      }
      if (threads == 1) {
        // Registry order, each entry as soon as its needs are done: a, b, c, late, d, e, f, g.
        const std::vector<size_t> expected = {1, 2, 3, 0, 4, 5, 6, 7};
        for (size_t k = 1; k < expected.size(); ++k) {
          EXPECT_LT(g_started[expected[k - 1]], g_started[expected[k]]) << k;
        }
      }
    }
  }
  // A cycle is refused before anything runs.
  const std::vector<AnalysisEntry> cycle = {{"a", "", &RunLogged<0>, {"b"}},
                                            {"b", "", &RunLogged<1>, {"a"}}};
  g_started[0] = g_started[1] = -1;
  AnalysisContext context(t);
  std::vector<Report> parts;
  std::vector<Status> status;
  EXPECT_FALSE(RunAnalyses(cycle, context, 0, 2, parts, status).ok());
  EXPECT_EQ(g_started[0], -1);
  EXPECT_EQ(g_started[1], -1);
}

}  // namespace
}  // namespace sightline
