// The HTML reporter: structure of the page (well-formed, sections, sortable tables, SVG charts,
// findings, diagnostics, escaping), its size on a real sample, and — when Debian's chromium is
// installed — that a headless browser loads it, runs its script without errors, and can take a
// screenshot (written beside the test's temp files; SIGHTLINE_SCREENSHOT=PATH keeps a copy).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "analyses/gpu_metrics/gpu_metrics.h"
#include "pipeline/pipeline.h"
#include "reporters/html/html_util.h"
#include "reporters/reporter.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

constexpr const char* kNastyName = "void f<int>(a&b)";

Report SampleReport() {
  Report r;
  r.tool_version = "0.0-test";
  ReportInput& in = r.inputs.emplace_back();
  in.label = "trace<1>.json";
  in.path = "/tmp/trace<1>.json";
  in.format = "kineto";
  in.diagnostics.Add(DiagCode::kKinetoInvalidEvent, 3, "events without a <device>");

  Section& o = r.AddSection("overview", "Overview", 0);
  o.AddFact("duration_ns", "Duration", int64_t{1'000'000}, Unit::kDurationNs);
  Series& u = o.series.emplace_back();
  u.key = "utilization_device_0";
  u.title = "GPU 0 utilization over time";
  u.x_unit = Unit::kDurationNs;
  u.y_unit = Unit::kPercent;
  u.time_axis = true;
  for (int i = 0; i < 10; ++i) {
    u.x.push_back(i * 100'000.0);
    u.y.push_back(i * 10.0);
  }

  Section& k = r.AddSection("kernel_summary", "Kernels", 0);
  Table& t = k.AddTable("kernels", "Top kernels",
                        {{"name", "Name", Unit::kText}, {"total_ns", "Total", Unit::kDurationNs}});
  t.rows.push_back({std::string(kNastyName), int64_t{5000}});
  t.rows.push_back({std::string("gemm"), int64_t{7000}});
  t.total_rows = 10;
  Table& c =
      k.AddTable("categories", "Kernel time by category",
                 {{"category", "Category", Unit::kText}, {"total_ns", "Total", Unit::kDurationNs}});
  c.rows.push_back({std::string("gemm"), int64_t{7000}});
  c.rows.push_back({std::string("attention"), int64_t{5000}});
  k.AddBarChart("time_by_category", "Kernel time by category", Unit::kDurationNs,
                {{"gemm", 7000}, {"attention", 5000}});

  Section& it = r.AddSection("iterations", "Iterations", 0);
  Table& itt = it.AddTable("iterations", "Iterations in order",
                           {{"index", "#", Unit::kNumber},
                            {"start_ns", "start", Unit::kTimestampNs},
                            {"wall_ns", "wall", Unit::kDurationNs}});
  Series& w = it.series.emplace_back();
  w.key = "wall_ns";
  w.title = "Wall time per iteration";
  w.y_unit = Unit::kDurationNs;
  for (int i = 0; i < 5; ++i) {
    itt.rows.push_back({int64_t{i}, int64_t{i * 200'000}, int64_t{150'000}});
    it.time_marks.push_back({i * 200'000, "iteration " + std::to_string(i)});
    w.x.push_back(i);
    w.y.push_back(150'000 + i * 1000);
  }

  Section& g = r.AddSection("idle_gaps", "GPU idle gaps", 0);
  Table& causes = g.AddTable("causes", "Idle time by cause",
                             {{"device", "device", Unit::kNumber},
                              {"cause", "cause", Unit::kText},
                              {"idle_ns", "idle", Unit::kDurationNs}});
  causes.rows.push_back({int64_t{0}, std::string("launch_latency"), int64_t{3000}});
  causes.rows.push_back({int64_t{0}, std::string("sync"), int64_t{1000}});
  g.AddBarChart("idle_by_cause", "Idle time by cause (all devices)", Unit::kDurationNs,
                {{"launch_latency", 3000}, {"sync", 1000}});

  Finding& f = r.findings.emplace_back();
  f.id = "launch_bound";
  f.severity = Severity::kHigh;
  f.title = "Launch-bound loop in <decode>";
  f.recommendation = "Capture the loop in a CUDA graph & replay it.";
  f.estimated_savings_ns = 12'345;
  f.evidence.push_back({"gap_ns", "Idle", int64_t{3000}, Unit::kDurationNs});
  return r;
}

// A minimal well-formedness check: every non-void element is closed in order; script and style
// bodies are skipped. Returns "" when well-formed, else what went wrong.
std::string CheckWellFormed(const std::string& html) {
  static const std::vector<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    if (html.compare(i, 2, "<!") == 0) {
      i = html.find('>', i);
      continue;
    }
    const size_t end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag";
    std::string tag = html.substr(i + 1, end - i - 1);
    const bool closing = !tag.empty() && tag[0] == '/';
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (closing) tag = tag.substr(1);
    const std::string name = tag.substr(0, tag.find_first_of(" \t\n/"));
    i = end + 1;
    if (closing) {
      if (stack.empty() || stack.back() != name) {
        return "unexpected </" + name + "> (open: " + (stack.empty() ? "" : stack.back()) + ")";
      }
      stack.pop_back();
      continue;
    }
    if (self_closing || std::find(kVoid.begin(), kVoid.end(), name) != kVoid.end()) continue;
    if (name == "script" || name == "style") {
      const size_t close = html.find("</" + name + ">", i);
      if (close == std::string::npos) return "unclosed " + name;
      i = close + name.size() + 3;
      continue;
    }
    stack.push_back(name);
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1)) ++n;
  return n;
}

TEST(HtmlEscape, SpecialCharacters) {
  EXPECT_EQ(html::XmlEscape("void f<int>(a&b) \"x\" 'y'"),
            "void f&lt;int&gt;(a&amp;b) &quot;x&quot; &#39;y&#39;");
}

// The page draws what the sections give and names none: under other keys, the same charts, bars
// and iteration marks.
TEST(HtmlReporter, NamesNoSection) {
  Report r = SampleReport();
  const std::string page = RenderHtmlReport(r);
  for (size_t i = 0; i < r.sections.size(); ++i) r.sections[i].key = "renamed_" + std::to_string(i);
  const std::string renamed = RenderHtmlReport(r);
  EXPECT_EQ(Count(renamed, "<svg "), 4u);
  EXPECT_EQ(Count(renamed, "<rect class=\"bar\""), Count(page, "<rect class=\"bar\""));
  EXPECT_EQ(Count(renamed, "class=\"marker\""), 5u);
  EXPECT_NE(renamed.find("Idle time by cause (all devices)"), std::string::npos);
}

TEST(HtmlReporter, StructureChartsAndEscaping) {
  const std::string page = RenderHtmlReport(SampleReport());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(CheckWellFormed(page), "");
  // Sections, tables, charts, findings, diagnostics.
  for (const char* key : {"overview", "kernel_summary", "iterations", "idle_gaps"}) {
    EXPECT_NE(page.find(std::string("data-key=\"") + key + "\""), std::string::npos) << key;
  }
  EXPECT_EQ(Count(page, "<table class=\"sortable\""), 5u);  // 4 section tables + diagnostics
  // utilization (line), categories (bars), wall per iteration (columns), causes (bars).
  EXPECT_EQ(Count(page, "<svg "), 4u);
  EXPECT_EQ(Count(page, "class=\"marker\""), 5u);  // iteration starts on the utilization chart
  EXPECT_NE(page.find("Kernel time by category"), std::string::npos);
  EXPECT_NE(page.find("Idle time by cause"), std::string::npos);
  EXPECT_NE(page.find("8 more rows not shown"), std::string::npos);
  EXPECT_NE(page.find("id=\"findings\""), std::string::npos);
  EXPECT_NE(page.find("data-id=\"launch_bound\""), std::string::npos);
  EXPECT_NE(page.find("id=\"diagnostics\""), std::string::npos);
  EXPECT_NE(page.find(Info(DiagCode::kKinetoInvalidEvent).code), std::string::npos);
  EXPECT_NE(page.find("(events without a &lt;device&gt;)"), std::string::npos);  // the detail
  // Escaping: the kernel name, the finding, the input path, the diagnostic detail.
  EXPECT_NE(page.find("void f&lt;int&gt;(a&amp;b)"), std::string::npos);
  EXPECT_EQ(page.find(kNastyName), std::string::npos);
  EXPECT_NE(page.find("Launch-bound loop in &lt;decode&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<decode>"), std::string::npos);
  EXPECT_EQ(page.find("<device>"), std::string::npos);
  EXPECT_EQ(page.find("trace<1>"), std::string::npos);
  // Sort keys are raw numbers.
  EXPECT_NE(page.find("data-v=\"5000\""), std::string::npos);
  // Offline: nothing is loaded from elsewhere (the SVG namespace is an identifier, not a load).
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(Count(page, "http://"), Count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST(HtmlReporter, EmptyReportIsStillAPage) {
  Report r;
  const std::string page = RenderHtmlReport(r);
  EXPECT_EQ(CheckWellFormed(page), "");
  EXPECT_NE(page.find("No findings."), std::string::npos);
  EXPECT_EQ(page.find("id=\"diagnostics\""), std::string::npos);
}

std::string SamplePath() {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/llama_decode_h100.nsys.sqlite";
}

TEST(HtmlReporter, SampleTraceIsSmallAndHasTheCharts) {
  AnalyzeOptions options;
  options.top_n = 50;
  StatusOr<Report> report = AnalyzeFiles({SamplePath()}, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string page = RenderHtmlReport(*report);
  EXPECT_EQ(CheckWellFormed(page), "");
  EXPECT_LT(page.size(), 2u << 20);  // aggregated: stays small however many kernels
  EXPECT_NE(page.find("utilization over time"), std::string::npos);
  EXPECT_NE(page.find("Kernel time by category"), std::string::npos);
  EXPECT_NE(page.find("Wall time per iteration"), std::string::npos);
  EXPECT_GE(Count(page, "<svg "), 4u);
}

// The memory section's chart: allocated and reserved over time, the peak marked
// (tests/data/kineto/profile_memory.json).
TEST(HtmlReporter, MemoryChartWithPeak) {
  StatusOr<Report> report =
      AnalyzeFiles({std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/kineto/profile_memory.json"},
                   AnalyzeOptions{});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string page = RenderHtmlReport(*report);
  EXPECT_EQ(CheckWellFormed(page), "");
  EXPECT_NE(page.find("GPU 0 memory over time"), std::string::npos);
  EXPECT_EQ(Count(page, "class=\"line2\""), 1u);  // reserved
  EXPECT_NE(page.find("peak 548"), std::string::npos);
  EXPECT_EQ(Count(page, "<circle class=\"mark\""), 1u);
}

// Issue 29: the GPU time of a graph step per range that captured its kernels, drawn from the
// cuda_graphs section's categorical series (labels) as one labelled bar per range in the order the
// program captured them, the capture's own range left out of the labels; the same route draws any
// series with labels, whatever its section.
TEST(HtmlReporter, GraphStepTimePerCaptureRange) {
  StatusOr<Report> report = AnalyzeFiles(
      {std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/graph_decode_node_h100.sqlite.gz"},
      AnalyzeOptions{});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string page = RenderHtmlReport(*report);
  EXPECT_EQ(CheckWellFormed(page), "");
  EXPECT_NE(page.find("GPU time per replay, by the ranges the kernels were captured in"),
            std::string::npos);
  const size_t first = page.find(">layer_0 &gt; attention</text>");
  const size_t second = page.find(">layer_0 &gt; mlp</text>");
  const size_t last = page.find(">head</text>");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  ASSERT_NE(last, std::string::npos);
  EXPECT_LT(first, second);  // program order, not by size
  EXPECT_LT(second, last);
  EXPECT_NE(page.find("layer_0 &gt; attention: 46.49 us"), std::string::npos);  // the bar's title

  Report r;
  Section& s = r.AddSection("any", "Any", -1);
  Series& se = s.series.emplace_back();
  se.key = "bars";
  se.title = "Some bars";
  se.y_unit = Unit::kDurationNs;
  se.x = {0, 1};
  se.y = {2'000, 1'000};
  se.labels = {"first", "second"};
  const std::string bars = RenderHtmlReport(r);
  EXPECT_EQ(Count(bars, "<rect class=\"bar\""), 2u);
  EXPECT_LT(bars.find(">first</text>"), bars.find(">second</text>"));
}

std::string GpuMetricsSamplePath() {
  return std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/gpu_memory_h200.nsys.sqlite";
}

// The sampled GPU metrics over time (examples/samples/gpu_memory_h200.nsys.sqlite: GR Active, SMs
// Active, SM Issue, Tensor Active, DRAM read/write, PCIe RX/TX; NVLink skipped by the capture):
// three charts with a line and a band per metric and the iteration marks; none for a trace without
// metrics (the llama sample).
TEST(HtmlReporter, GpuMetricsChartsForTheMetricsPresent) {
  StatusOr<Report> report = AnalyzeFiles({GpuMetricsSamplePath()}, AnalyzeOptions{});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string page = RenderHtmlReport(*report);
  EXPECT_EQ(CheckWellFormed(page), "");
  EXPECT_LT(page.size(), 1u << 20);
  for (const char* title : {"GPU 0 compute over time", "GPU 0 DRAM bandwidth over time",
                            "GPU 0 PCIe / NVLink over time"}) {
    EXPECT_EQ(Count(page, std::string("<title>") + title), 1u) << title;
  }
  EXPECT_EQ(Count(page, "class=\"mline\""), 8u);
  EXPECT_EQ(Count(page, "class=\"band\""), 8u);
  EXPECT_EQ(Count(page, "class=\"legend\""), 8u);
  for (const char* metric :
       {"GR Active", "SMs Active", "SM Issue", "Tensor Active", "DRAM Read Bandwidth",
        "DRAM Write Bandwidth", "PCIe RX Throughput", "PCIe TX Throughput"}) {
    EXPECT_EQ(Count(page, std::string(">") + metric + "</text></g>"), 1u) << metric;
  }
  EXPECT_EQ(page.find("NVLink RX"), std::string::npos);  // skipped by the capture: not drawn
  // The iteration marks on the three metric charts as on the utilization chart above them.
  const size_t first = page.find("<title>GPU 0 compute over time");
  ASSERT_NE(first, std::string::npos);
  const size_t end = page.find("</svg>", first);
  const size_t iterations = Count(page.substr(first, end - first), "class=\"marker\"");
  EXPECT_GT(iterations, 0u);
  const size_t util = page.find("<title>GPU 0 utilization over time");
  ASSERT_NE(util, std::string::npos);
  EXPECT_EQ(Count(page.substr(util, page.find("</svg>", util) - util), "class=\"marker\""),
            iterations);

  StatusOr<Report> bare = AnalyzeFiles({SamplePath()}, AnalyzeOptions{});
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  const std::string plain = RenderHtmlReport(*bare);
  EXPECT_EQ(plain.find("class=\"mline\""), std::string::npos);
  EXPECT_EQ(plain.find("compute over time"), std::string::npos);
}

// The page does not grow with the samples: 10^3 and 10^5 samples per metric give charts of the
// same size (200 buckets each).
TEST(HtmlReporter, GpuMetricsChartsStaySmall) {
  auto page_for = [](int samples) {
    testing::TraceFixture f;
    f.Device(0);
    f.Kernel("gemm", 0, 1'000'000'000);  // 1 s
    const TimeNs period = 1'000'000'000 / samples;
    std::vector<StringId> metrics;
    for (const char* m :
         {"GR Active [Throughput %]", "SMs Active [Throughput %]", "SM Issue [Throughput %]",
          "Tensor Active [Throughput %]", "DRAM Read Bandwidth [Throughput %]",
          "DRAM Write Bandwidth [Throughput %]"}) {
      metrics.push_back(f.Intern(m));
    }
    for (int i = 0; i < samples; ++i) {
      for (size_t m = 0; m < metrics.size(); ++m) {
        f.builder().AddCounter(i * period, 0, metrics[m], 12.5 + 80.0 * ((i * 7 + m) % 11) / 11);
      }
    }
    const Trace t = f.Build();
    Report report;
    report.inputs.emplace_back().label = "generated";
    EXPECT_TRUE(RunGpuMetricsSection(*testing::Ctx(t), 0, report).ok());
    return RenderHtmlReport(report);
  };
  const std::string small = page_for(1'000), large = page_for(100'000);
  EXPECT_EQ(Count(large, "class=\"mline\""), 6u);
  EXPECT_EQ(CheckWellFormed(large), "");
  EXPECT_LT(large.size(), 200u << 10);
  EXPECT_LT(large.size(), small.size() * 11 / 10);
}

TEST(HtmlReporter, CliWritesTheFile) {
  const std::string dir = testing::MakeTempDir();
  const std::string out = dir + "/report.html";
  testing::CliResult r =
      testing::RunSightline("analyze --format html -o '" + out + "' '" + SamplePath() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = testing::Slurp(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(CheckWellFormed(html), "");
}

// Headless chromium, when installed (scripts/install-deps.sh installs it unless
// SIGHTLINE_NO_BROWSER=1); the tests skip without it.
std::string FindChromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(p)) return p;
  }
  return "";
}

struct ShellRun {
  int exit_code = -1;
  std::string out, err;
};

ShellRun RunShell(const std::string& cmd, const std::string& dir) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  ShellRun r;
  const int status = std::system((cmd + " >'" + out + "' 2>'" + err + "'").c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = testing::Slurp(out);
  r.err = testing::Slurp(err);
  return r;
}

std::string ChromiumCommand(const std::string& chromium, const std::string& dir) {
  return "timeout 120 '" + chromium +
         "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking --disable-component-update --disable-sync "
         "--disable-dev-shm-usage --enable-logging=stderr --v=0 --user-data-dir='" +
         dir + "/profile' ";
}

TEST(HtmlReporterBrowser, LoadsWithoutScriptErrorsAndScreenshots) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed";
  AnalyzeOptions options;
  options.top_n = 50;
  StatusOr<Report> report = AnalyzeFiles({SamplePath()}, options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string dir = testing::MakeTempDir();
  const std::string page = dir + "/report.html";
  std::ofstream(page, std::ios::binary) << RenderHtmlReport(*report);

  ShellRun dom = RunShell(ChromiumCommand(chromium, dir) + "--dump-dom 'file://" + page + "'", dir);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  // The script ran to its end (it marks the body) and raised nothing.
  EXPECT_NE(dom.out.find("data-ready=\"1\""), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_GE(Count(dom.out, "<svg "), 4u);
  EXPECT_NE(dom.out.find("Kernel time by category"), std::string::npos);

  const std::string shot = dir + "/report.png";
  ShellRun s = RunShell(ChromiumCommand(chromium, dir) +
                            "--hide-scrollbars --window-size=1280,2400 "
                            "--screenshot='" +
                            shot + "' 'file://" + page + "'",
                        dir);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  ASSERT_TRUE(std::filesystem::exists(shot));
  EXPECT_GT(std::filesystem::file_size(shot), 10'000u);
  if (const char* keep = std::getenv("SIGHTLINE_SCREENSHOT"); keep != nullptr && *keep != '\0') {
    std::filesystem::copy_file(shot, keep, std::filesystem::copy_options::overwrite_existing);
  }
}

// The GPU metrics charts load in the browser and every line and band is in the rendered page.
TEST(HtmlReporterBrowser, GpuMetricsChartsRender) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed";
  StatusOr<Report> report = AnalyzeFiles({GpuMetricsSamplePath()}, AnalyzeOptions{});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string dir = testing::MakeTempDir();
  const std::string page = dir + "/metrics.html";
  std::ofstream(page, std::ios::binary) << RenderHtmlReport(*report);
  ShellRun dom = RunShell(ChromiumCommand(chromium, dir) + "--dump-dom 'file://" + page + "'", dir);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("data-ready=\"1\""), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(Count(dom.out, "class=\"mline\""), 8u);
  EXPECT_EQ(Count(dom.out, "class=\"band\""), 8u);
}

// The TensorRT engine report: its engine graph (an SVG DAG) loads in the browser too.
TEST(HtmlReporterBrowser, TrtEngineGraphRenders) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed";
  StatusOr<Report> report = AnalyzeFiles(
      {std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/trt/tiny.engine.graph.json"}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const std::string dir = testing::MakeTempDir();
  const std::string page = dir + "/trt.html";
  std::ofstream(page, std::ios::binary) << RenderHtmlReport(*report);
  ShellRun dom = RunShell(ChromiumCommand(chromium, dir) + "--dump-dom 'file://" + page + "'", dir);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("data-ready=\"1\""), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_NE(dom.out.find("class=\"dag\""), std::string::npos);
  EXPECT_EQ(Count(dom.out, "<g class=\"node\">"), 7u);  // 5 layers, an input, an output
}

// A real engine's graph (the shared ResNet-50 QAT engine, ../shared/traces/trt): every node and
// edge the report holds is drawn by the browser.
TEST(HtmlReporterBrowser, SharedTrtEngineGraphRenders) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed";
  const std::string shared = testing::SharedTracesDir();
  const std::string engine = shared + "/trt/resnet_a100_qat/resnet-qat.onnx.engine.graph.json";
  if (shared.empty() || !std::filesystem::exists(engine)) GTEST_SKIP() << "no shared TRT engine";
  StatusOr<Report> report = AnalyzeFiles({engine}, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  size_t nodes = 0;
  for (const Section& section : report->sections) {
    for (const Graph& g : section.graphs) nodes += g.nodes.size();
  }
  ASSERT_GT(nodes, 30u);
  const std::string dir = testing::MakeTempDir();
  const std::string page = dir + "/trt.html";
  std::ofstream(page, std::ios::binary) << RenderHtmlReport(*report);
  ShellRun dom = RunShell(ChromiumCommand(chromium, dir) + "--dump-dom 'file://" + page + "'", dir);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("data-ready=\"1\""), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(Count(dom.out, "<g class=\"node\">"), nodes);
}

}  // namespace
}  // namespace sightline
