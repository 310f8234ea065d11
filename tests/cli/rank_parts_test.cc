// Tests for what carries a rank between threads and MPI processes: the report and rank-profile
// codecs (lossless, corrupt blobs refused), the thread workers (merge in file order, first error
// in file order), the multi-rank pipeline giving one report for any number of threads, and the
// progress line's text.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "analyses/common/analysis_context.h"
#include "analyses/ranks/ranks.h"
#include "base/progress_line.h"
#include "importers/importer.h"
#include "pipeline/pipeline.h"
#include "pipeline/rank_workers.h"
#include "report/report_codec.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

TEST(ReportCodec, SectionAndFindingRoundTrip) {
  Section s;
  s.key = "k";
  s.title = "T";
  s.input = 3;
  s.AddFact("a", "A", int64_t{-5}, Unit::kCount);
  s.AddFact("b", "B", 0.1 + 0.2, Unit::kPercent);
  s.AddFact("c", "C", Value(), Unit::kText);
  Table& t = s.AddTable("t", "Tab", {{"x", "X", Unit::kText, true}, {"y", "Y", Unit::kBytes}});
  t.rows.push_back({std::string("row"), int64_t{7}});
  t.total_rows = 9;
  t.note = "n";
  Series& x = s.series.emplace_back();
  x.key = "s";
  x.style = SeriesStyle::kCdf;
  x.x = {1, 2};
  x.y = {3.5, 4.25};
  x.marks.push_back({1, 3.5, "peak"});
  Series& bars = s.series.emplace_back();  // categories
  bars.key = "per_replay_by_range";
  bars.x = {0, 1};
  bars.y = {46'490, 31'000};
  bars.labels = {"layer_0 > attention", "layer_0 > mlp"};
  Series& over = s.series.emplace_back();  // several lines with bands, a gap (NaN)
  over.key = "gpu_metrics_compute_device_0";
  over.style = SeriesStyle::kOverTime;
  over.x = {0, 10};
  over.lines.push_back({"SMs Active", {50.0, std::nan("")}, {75.0, std::nan("")}});
  over.lines.push_back({"SM Issue", {5.0, 6.0}, {}});
  Graph& g = s.graphs.emplace_back();
  g.nodes.push_back({"l", "d", "tip", 0.5, true});
  g.edges.push_back({0, 0});
  Timeline& tl = s.timelines.emplace_back();
  tl.lanes.push_back({"lane", {{10, 20, "gpu", "k"}}});
  s.notes = {"one", "two"};
  Finding f;
  f.id = "launch_bound";
  f.severity = Severity::kHigh;
  f.evidence.push_back({"e", "E", 1.5, Unit::kRatio});
  f.estimated_savings_ns = 42;
  f.input = 3;
  f.AddSpan(5, 9, 1);

  ByteWriter w;
  EncodeSection(s, w);
  EncodeFinding(f, w);
  ByteReader r(w.bytes());
  Section s2 = DecodeSection(r);
  Finding f2 = DecodeFinding(r);
  ASSERT_TRUE(r.Finish("test").ok());

  Report a, b;
  a.sections.push_back(s);
  a.findings.push_back(f);
  b.sections.push_back(s2);
  b.findings.push_back(f2);
  EXPECT_EQ(RenderJsonReport(a), RenderJsonReport(b));
  EXPECT_EQ(std::get<double>(s2.facts[1].value), 0.1 + 0.2);  // bit for bit
  EXPECT_EQ(s2.graphs[0].nodes[0].tooltip, "tip");
  EXPECT_EQ(s2.timelines[0].lanes[0].spans[0].end_ns, 20);
  EXPECT_TRUE(s2.tables[0].columns[0].optional);
  EXPECT_EQ(f2.spans.size(), 1u);
  ASSERT_EQ(s2.series[2].lines.size(), 2u);
  EXPECT_EQ(s2.series[2].style, SeriesStyle::kOverTime);
  EXPECT_EQ(s2.series[2].lines[0].band_max[0], 75.0);
  EXPECT_TRUE(std::isnan(s2.series[2].lines[0].y[1]));
  EXPECT_EQ(s2.series[2].lines[1].label, "SM Issue");
  EXPECT_TRUE(s2.series[2].lines[1].band_max.empty());
  EXPECT_EQ(s2.series[1].labels, bars.labels);

  // Cut short anywhere: refused, no crash.
  for (size_t n : {size_t{0}, size_t{3}, w.bytes().size() / 2, w.bytes().size() - 1}) {
    ByteReader cut(std::string_view(w.bytes()).substr(0, n));
    DecodeSection(cut);
    DecodeFinding(cut);
    EXPECT_FALSE(cut.Finish("cut").ok()) << n;
  }
}

TEST(ReportCodec, DiagnosticsRoundTrip) {
  ReportInput in;
  in.label = "rank0.json (rank 0)";
  in.rank = 0;
  in.diagnostics.Add(DiagCode::kKernelWithoutLaunch, 3);
  in.diagnostics.Add(DiagCode::kStringCut, 2, "detail");
  ByteWriter w;
  EncodeReportInput(in, w);
  ByteReader r(w.bytes());
  ReportInput out = DecodeReportInput(r);
  ASSERT_TRUE(r.Finish("test").ok());
  EXPECT_EQ(out.label, in.label);
  ASSERT_EQ(out.diagnostics.items().size(), 2u);
  EXPECT_EQ(out.diagnostics.Count(DiagCode::kKernelWithoutLaunch), 3);
  EXPECT_EQ(out.diagnostics.items()[1].detail, "detail");
}

TEST(RankProfileCodec, RoundTripAndRefusals) {
  RankProfile p;
  p.label = "r1";
  p.input = 1;
  p.trace_rank = 1;
  p.world_size = 8;
  p.trace_host = "node-7";
  p.busy_ns = 123;
  p.comm_names = {"ncclAllReduce", "ncclAllGather"};
  p.comm = {{1, 0, 10, 20}, {0, 2, 30, 45}};
  p.comm_kernels = 2;
  const std::string blob = EncodeRankProfile(p);
  StatusOr<RankProfile> q = DecodeRankProfile(blob);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->busy_ns, 123);
  EXPECT_EQ(q->trace_host, "node-7");
  EXPECT_EQ(q->comm_names, p.comm_names);
  ASSERT_EQ(q->comm.size(), 2u);
  EXPECT_EQ(q->comm[1].slot, 2);
  EXPECT_EQ(q->comm[1].end_ns, 45);
  EXPECT_FALSE(DecodeRankProfile(blob.substr(0, blob.size() - 1)).ok());
  EXPECT_FALSE(DecodeRankProfile("garbage").ok());
  RankProfile bad = p;
  bad.comm[0].name = 5;  // names no communication kernel
  EXPECT_FALSE(DecodeRankProfile(EncodeRankProfile(bad)).ok());
}

TEST(ThreadWorkers, MergeInFileOrderAndFirstErrorWins) {
  for (int threads : {1, 2, 4}) {
    std::unique_ptr<RankWorkers> w = MakeThreadWorkers(threads);
    std::vector<size_t> merged;
    std::vector<WorkerShare> shares;
    Status s = w->Run(
        20, [](size_t i) -> StatusOr<std::string> { return std::to_string(i * i); },
        [&](size_t i, const std::string& blob) {
          EXPECT_EQ(blob, std::to_string(i * i));
          merged.push_back(i);
          return Status::Ok();
        },
        &shares);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(merged.size(), 20u) << threads;
    for (size_t i = 0; i < merged.size(); ++i) EXPECT_EQ(merged[i], i);
    ASSERT_EQ(shares.size(), 1u);
    EXPECT_EQ(shares[0].files, 20);

    std::atomic<int> reduced{0};
    merged.clear();
    s = w->Run(
        20,
        [&](size_t i) -> StatusOr<std::string> {
          ++reduced;
          if (i == 7 || i == 12) return InvalidInputError("file " + std::to_string(i));
          return std::string();
        },
        [&](size_t i, const std::string&) {
          merged.push_back(i);
          return Status::Ok();
        },
        nullptr);
    EXPECT_EQ(s.message(), "file 7") << threads;
    EXPECT_EQ(merged.size(), 7u);  // 0..6 merged, nothing after the error
  }
}

// The two HTA ranks: one thread, two threads and one trace at a time all give the same report.
TEST(RankPipeline, ThreadsGiveTheSameReport) {
  const char* shared = std::getenv("SIGHTLINE_SHARED_TRACES");
  if (shared == nullptr) GTEST_SKIP() << "SIGHTLINE_SHARED_TRACES not set";
  const std::string dir = std::string(shared) + "/";
  const std::vector<std::string> files = {dir + "kineto_hta_sampled_rank0.json.gz",
                                          dir + "kineto_hta_sampled_rank1.json.gz"};
  for (const std::string& f : files) {
    if (!std::filesystem::exists(f)) GTEST_SKIP() << f << " absent";
  }
  AnalyzeOptions options;
  RunOptions one;
  one.jobs = 1;
  size_t progress_calls = 0;
  one.progress = [&](const RankProgress& p) {
    ++progress_calls;
    EXPECT_EQ(p.files_total, 2u);
    EXPECT_LE(p.bytes_done, p.bytes_total);
  };
  StatusOr<Report> a = AnalyzeFiles(files, options, one);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(progress_calls, 2u);
  RunOptions two;
  two.jobs = 2;
  StatusOr<Report> b = AnalyzeFiles(files, options, two);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(RenderJsonReport(*a), RenderJsonReport(*b));
  EXPECT_EQ(a->run.mpi_processes, 0);  // no run record without MPI
  ASSERT_FALSE(a->sections.empty());
  EXPECT_EQ(a->sections[0].key, "ranks");
  ASSERT_EQ(a->inputs.size(), 2u);
  for (const Section& s : a->sections) EXPECT_LT(s.input, 2);
}

// Workers standing for two MPI processes, on this thread: each file reduced where Run is called,
// the blobs merged in file order, as process 0 merges them.
class TwoProcessWorkers : public RankWorkers {
 public:
  int processes() const override { return 2; }
  bool root() const override { return true; }
  Status Run(size_t n, const ReduceFn& reduce, const MergeFn& merge,
             std::vector<WorkerShare>* shares) override {
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(std::string blob, reduce(i));
      ++reduced;
      RETURN_IF_ERROR(merge(i, blob));
    }
    if (shares != nullptr) *shares = {{static_cast<int64_t>(n), 0.0}, {0, 0.0}};
    return Status::Ok();
  }
  size_t reduced = 0;
};

// Serving results (--requests) join the first trace's iterations and still leave the ranks
// spread: every rank file goes through the workers (threads or MPI processes), and one thread,
// two threads and two processes give the same report, the token gaps' join included.
TEST(RankPipeline, ServingResultsLeaveTheRanksSpread) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  const std::vector<std::string> files = {dir + "serving_loop_h100.slrec",
                                          dir + "llama_decode_h100.nsys.sqlite"};
  const NamedInputs named = {{"--requests", dir + "serving_loop_h100.requests.jsonl"}};
  const AnalyzeOptions options;
  RunOptions one;
  one.jobs = 1;
  StatusOr<Report> a = AnalyzeFiles(files, options, one, named);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::string json = RenderJsonReport(*a);
  // The join, made where the first trace (the serving loop's recording) was reduced.
  EXPECT_NE(json.find("\"itl_by_gc\""), std::string::npos);
  EXPECT_NE(json.find("\"id\": \"gc_in_token_gaps\""), std::string::npos);
  RunOptions two;
  two.jobs = 2;
  StatusOr<Report> b = AnalyzeFiles(files, options, two, named);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(RenderJsonReport(*b), json);
  TwoProcessWorkers workers;
  RunOptions mpi;
  mpi.workers = &workers;
  StatusOr<Report> c = AnalyzeFiles(files, options, mpi, named);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(workers.reduced, files.size());  // not every file read on process 0 alone
  EXPECT_EQ(c->run.mpi_processes, 2);
  c->run = RunInfo{};
  EXPECT_EQ(RenderJsonReport(*c), json);
}

// One trace's analyses on several threads give the report of one thread, on every shipped trace
// (each run with a fresh context, so that the threads race to build the shared facts).
TEST(AnalyzeTrace, ThreadsGiveTheSameReport) {
  const std::string root = SIGHTLINE_SOURCE_DIR;
  std::vector<std::string> files;
  for (const char* dir :
       {"/tests/data/kineto", "/tests/data/nsys", "/tests/data/recorder", "/examples/samples"}) {
    for (const auto& e : std::filesystem::directory_iterator(root + dir)) {
      const std::string name = e.path().filename().string();
      auto ends = [&](std::string_view s) {
        return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
      };
      if (ends(".sqlite") || ends(".json.gz") || ends(".slrec") ||
          (ends(".json") && !ends(".truth.json"))) {
        files.push_back(e.path().string());
      }
    }
  }
  ASSERT_GE(files.size(), 10u);
  int compared = 0;
  for (const std::string& path : files) {
    StatusOr<Trace> trace = ImportTrace(path);
    if (!trace.ok()) continue;  // not a trace (a snapshot, a log): other tests read those
    auto run = [&](int threads) {
      AnalysisContext context(*trace);
      Report report;
      Status s = AnalyzeTrace(context, "t", report, threads);
      EXPECT_TRUE(s.ok()) << path << ": " << s.message();
      return RenderJsonReport(report);
    };
    const std::string one = run(1);
    for (int threads : {2, 4, 16}) EXPECT_EQ(run(threads), one) << path << ", " << threads;
    ++compared;
  }
  EXPECT_GE(compared, 10) << "fewer shipped traces than expected";
}

TEST(ProgressLine, Text) {
  EXPECT_EQ(FormatFileProgress(0, 4, 0, 4u << 20, 0.0), "0/4 files, 0 kB of 4.0 MB read");
  // A quarter of the bytes in 10 s: 30 s left.
  EXPECT_EQ(FormatFileProgress(1, 4, 1u << 20, 4u << 20, 10.0),
            "1/4 files, 1.0 MB of 4.0 MB read, 0:30 left");
  EXPECT_EQ(FormatFileProgress(2, 4, 0, 0, 90.0), "2/4 files, 1:30 left");
  ProgressLine off(false);
  off.Update("nothing", true);  // disabled: writes nothing (and does not crash)
  off.Clear();
}

}  // namespace
}  // namespace sightline
