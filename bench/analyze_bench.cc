// Benchmarks of `sightline analyze` (docs/PERFORMANCE.md): import + every registered analysis +
// the JSON report, on synthetic nsys SQLite and Kineto JSON(.gz) traces of 10^5 and 10^6 kernels,
// reported as bytes/s (uncompressed input) and items/s (kernels); then the building blocks on 10^6
// kernels (import alone, each analysis alone, the findings engine and each of its rules, the JSON
// reporter, TraceBuilder::Finish).
//
// Traces are made on first use by bench/gen_nsys_sqlite.py and bench/gen_kineto_json.py into
// $SIGHTLINE_BENCH_DATA (default: <build>/bench-data) and reused by later runs. The full-size runs
// (10^7 kernels, GB-sized JSON, peak memory, comparisons) are bench/run_benchmarks.sh's job.
//
// With SIGHTLINE_NSYS_BENCH_FILE=F, also the nsys reader alone on the export F
// (ImportFile/nsys_sqlite; e.g. 10^7 kernels from bench/gen_nsys_sqlite.py), which fails unless
// every kernel is linked to its launch and every range nests:
//   SIGHTLINE_NSYS_BENCH_FILE=F build/bench/sightline_bench --benchmark_filter=ImportFile
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyses/common/analysis.h"
#include "analyses/common/analysis_context.h"
#include "analyses/findings/findings.h"
#include "importers/importer.h"
#include "importers/nsys/nsys_importer.h"
#include "model/trace_builder.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

enum class Format { kNsys, kKinetoJson, kKinetoGz };

std::string DataDir() {
  const char* env = std::getenv("SIGHTLINE_BENCH_DATA");
  return env && *env ? env : SIGHTLINE_BENCH_DATA_DIR;
}

int Run(const std::string& command) {
  std::fprintf(stderr, "sightline_bench: %s\n", command.c_str());
  return std::system(command.c_str());
}

// Path of a generated trace with `kernels` kernels, generating it when missing. Empty on failure.
// Files are written under a temporary name and renamed, so an interrupted run leaves no bad cache.
std::string TracePath(Format format, int64_t kernels) {
  const std::string dir = DataDir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string src = SIGHTLINE_SOURCE_DIR "/bench";
  const std::string py = SIGHTLINE_PYTHON;
  std::string path;
  std::string make;
  switch (format) {
    case Format::kNsys:
      path = fmt::format("{}/nsys_{}.sqlite", dir, kernels);
      make = fmt::format("{} {}/gen_nsys_sqlite.py --kernels {} --out '{}.tmp'", py, src, kernels,
                         path);
      break;
    case Format::kKinetoJson:
      path = fmt::format("{}/kineto_{}.json", dir, kernels);
      make = fmt::format("{} {}/gen_kineto_json.py --kernels {} --output '{}.tmp'", py, src,
                         kernels, path);
      break;
    case Format::kKinetoGz: {
      const std::string json = TracePath(Format::kKinetoJson, kernels);
      if (json.empty()) return "";
      path = json + ".gz";
      make = fmt::format("gzip -c '{}' > '{}.tmp'", json, path);
      break;
    }
  }
  if (fs::exists(path)) return path;
  if (Run(make) != 0 || Run(fmt::format("mv '{0}.tmp' '{0}'", path)) != 0) {
    fs::remove(path + ".tmp", ec);
    return "";
  }
  return path;
}

// bytes/s counts the uncompressed input (for .json.gz, the JSON it inflates to), as the
// throughput targets in docs/PERFORMANCE.md do; file_MB is the size on disk.
void SetThroughput(benchmark::State& state, const std::string& path, int64_t kernels) {
  const int64_t file_bytes = static_cast<int64_t>(fs::file_size(path));
  int64_t bytes = file_bytes;
  if (path.ends_with(".gz")) {
    std::error_code ec;
    const auto json_bytes = fs::file_size(path.substr(0, path.size() - 3), ec);
    if (!ec) bytes = static_cast<int64_t>(json_bytes);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetItemsProcessed(state.iterations() * kernels);
  state.counters["file_MB"] = static_cast<double>(file_bytes) / 1e6;
}

// What `sightline analyze FILE --format json` does, minus writing the output file.
void BM_Analyze(benchmark::State& state, Format format) {
  const int64_t kernels = state.range(0);
  const std::string path = TracePath(format, kernels);
  if (path.empty()) return state.SkipWithError("cannot generate the trace (see stderr)");
  for (auto _ : state) {
    StatusOr<Report> report = AnalyzeFiles({path}, AnalyzeOptions{});
    if (!report.ok()) return state.SkipWithError(report.status().message().c_str());
    std::string json = RenderJsonReport(*report);
    benchmark::DoNotOptimize(json.data());
  }
  SetThroughput(state, path, kernels);
}

void BM_Import(benchmark::State& state, Format format) {
  const int64_t kernels = state.range(0);
  const std::string path = TracePath(format, kernels);
  if (path.empty()) return state.SkipWithError("cannot generate the trace (see stderr)");
  for (auto _ : state) {
    StatusOr<Trace> trace = ImportTrace(path);
    if (!trace.ok()) return state.SkipWithError(trace.status().message().c_str());
    benchmark::DoNotOptimize(trace->kernels.size());
  }
  SetThroughput(state, path, kernels);
}

// The nsys reader alone on an export of the caller's (SIGHTLINE_NSYS_BENCH_FILE), with what it
// read as counters. A kernel not linked to its launch, or a range that does not nest, is an error:
// the generator's exports have neither.
void BM_ImportNsysFile(benchmark::State& state, const std::string& path) {
  int64_t kernels = 0;
  for (auto _ : state) {
    StatusOr<Trace> trace = ImportNsysSqlite(path);
    if (!trace.ok()) return state.SkipWithError(trace.status().message().c_str());
    int64_t linked = 0;
    for (int32_t row : trace->kernels.launch_call) linked += row != kNoRow;
    kernels = static_cast<int64_t>(trace->kernels.size());
    if (linked != kernels) return state.SkipWithError("kernels without their launching call");
    if (trace->diagnostics.Count(DiagCode::kRangeNotNested) != 0) {
      return state.SkipWithError("ranges that do not nest");
    }
    state.counters["api_calls"] = static_cast<double>(trace->api_calls.size());
    state.counters["memops"] = static_cast<double>(trace->memops.size());
    state.counters["ranges"] = static_cast<double>(trace->ranges.size());
  }
  SetThroughput(state, path, kernels);
}

// One imported trace per (format, size), kept for the analysis micro-benchmarks.
const Trace* CachedTrace(Format format, int64_t kernels) {
  static std::map<std::pair<int, int64_t>, std::unique_ptr<Trace>> cache;
  auto& slot = cache[{static_cast<int>(format), kernels}];
  if (!slot) {
    const std::string path = TracePath(format, kernels);
    if (path.empty()) return nullptr;
    StatusOr<Trace> trace = ImportTrace(path);
    if (!trace.ok()) {
      std::fprintf(stderr, "sightline_bench: %s\n", trace.status().message().c_str());
      return nullptr;
    }
    slot = std::make_unique<Trace>(std::move(*trace));
  }
  return slot.get();
}

// One registered analysis alone (e.g. kernel_summary) on an imported trace, with a fresh context
// (so the facts it asks for are computed inside the measurement).
void BM_Analysis(benchmark::State& state, Format format, const AnalysisEntry* analysis) {
  const int64_t kernels = state.range(0);
  const Trace* trace = CachedTrace(format, kernels);
  if (!trace) return state.SkipWithError("cannot import the trace (see stderr)");
  const AnalyzeOptions options;
  for (auto _ : state) {
    Report report;
    report.inputs.emplace_back();
    AnalysisContext context(*trace, options);
    Status s = analysis->run(context, 0, report);
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(report.sections.data());
  }
  state.SetItemsProcessed(state.iterations() * kernels);
}

// The findings engine: the shared context (iterations, busy intervals, ...) plus every rule.
void BM_Findings(benchmark::State& state, Format format) {
  const int64_t kernels = state.range(0);
  const Trace* trace = CachedTrace(format, kernels);
  if (!trace) return state.SkipWithError("cannot import the trace (see stderr)");
  const AnalyzeOptions options;
  for (auto _ : state) {
    StatusOr<std::vector<Finding>> findings =
        ComputeFindings(*std::make_unique<AnalysisContext>(*trace, options));
    if (!findings.ok()) return state.SkipWithError(findings.status().message().c_str());
    benchmark::DoNotOptimize(findings->data());
  }
  state.SetItemsProcessed(state.iterations() * kernels);
}

// The facts the rules share, computed on a fresh context: iterations, busy unions, windows,
// blocking calls.
void BM_FindingsContext(benchmark::State& state, Format format) {
  const int64_t kernels = state.range(0);
  const Trace* trace = CachedTrace(format, kernels);
  if (!trace) return state.SkipWithError("cannot import the trace (see stderr)");
  const AnalyzeOptions options;
  for (auto _ : state) {
    AnalysisContext context(*trace, options);
    StatusOr<const IterationsResult*> iterations = context.loop().Iterations();
    if (!iterations.ok()) return state.SkipWithError(iterations.status().message().c_str());
    benchmark::DoNotOptimize(context.loop().Windows().data());
  }
  state.SetItemsProcessed(state.iterations() * kernels);
}

// One finding rule alone, on a context built once.
// One rule on a trace's context (FindingRuleFn<AnalysisContext>).
void BM_FindingRule(benchmark::State& state, Format format, const FindingRule* rule) {
  const int64_t kernels = state.range(0);
  const Trace* trace = CachedTrace(format, kernels);
  if (!trace) return state.SkipWithError("cannot import the trace (see stderr)");
  const AnalyzeOptions options;
  AnalysisContext context(*trace, options);
  StatusOr<const IterationsResult*> iterations = context.loop().Iterations();
  if (!iterations.ok()) return state.SkipWithError(iterations.status().message().c_str());
  for (auto _ : state) {
    std::vector<Finding> out;
    Status s = std::get<FindingRuleFn<AnalysisContext>>(rule->run)(context, out);
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kernels);
}

void BM_RenderJson(benchmark::State& state, Format format) {
  const int64_t kernels = state.range(0);
  const Trace* trace = CachedTrace(format, kernels);
  if (!trace) return state.SkipWithError("cannot import the trace (see stderr)");
  Report report;
  Status s = AnalyzeTrace(*std::make_unique<AnalysisContext>(*trace), "bench", report);
  if (!s.ok()) return state.SkipWithError(s.message().c_str());
  size_t bytes = 0;
  for (auto _ : state) {
    std::string json = RenderJsonReport(report);
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  }
  state.counters["report_KB"] = static_cast<double>(bytes) / 1e3;
}

// TraceBuilder::Finish (sort + launch linking + range nesting) on rows shaped like a decode loop:
// N kernels over 24 names, each with its cudaLaunchKernel, a sync every 100 kernels, a range per
// 10 kernels. state.range(1) = 1 appends the kernels in reverse order so that the sort has work
// (Kineto files are not in start order; nsys tables are).
void BM_TraceBuilderFinish(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool shuffled = state.range(1) != 0;
  for (auto _ : state) {
    state.PauseTiming();
    TraceBuilder b;
    b.Reserve(n, 0, n + n / 100, n / 10);
    std::vector<StringId> names;
    for (int k = 0; k < 24; ++k) {
      names.push_back(b.Intern(fmt::format("void ns::kernel_{}<float, 128>(float*, int)", k)));
    }
    const StringId layer = b.Intern("layer");
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = shuffled ? n - 1 - j : j;
      const TimeNs slot = 1'000'000'000 + i * 5'000;
      KernelRow k;
      k.start_ns = slot + 2'000;
      k.end_ns = slot + 2'500 + (i * 7919) % 2'400;
      k.stream = 7;
      k.pid = 4242;
      k.name = names[i % 24];
      k.correlation = 4 * i + 1;
      b.AddKernel(k);
      ApiCallRow call;
      call.start_ns = slot + 500;
      call.end_ns = slot + 1'500;
      call.pid = call.tid = 4242;
      call.name = "cudaLaunchKernel_v7000";
      call.correlation = 4 * i + 1;
      b.AddApiCall(call);
      if (i % 100 == 99) {
        call.start_ns = slot + 1'600;
        call.end_ns = slot + 4'950;
        call.name = "cudaStreamSynchronize_v3020";
        call.correlation = 4 * i + 3;
        b.AddApiCall(call);
      }
      if (i % 10 == 0) {
        RangeRow r;
        r.start_ns = slot - 20;
        r.end_ns = slot + 10 * 5'000 - 40;
        r.pid = r.tid = 4242;
        r.name = layer;
        b.AddRange(r);
      }
    }
    state.ResumeTiming();
    Trace trace = b.Finish();
    benchmark::DoNotOptimize(trace.kernels.launch_call.data());
    state.PauseTiming();
    { Trace discard = std::move(trace); }  // freeing is not part of Finish
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

constexpr int64_t k1e5 = 100'000, k1e6 = 1'000'000;

void RegisterAll() {
  using benchmark::RegisterBenchmark;
  const std::pair<const char*, Format> formats[] = {
      {"nsys_sqlite", Format::kNsys},
      {"kineto_json", Format::kKinetoJson},
      {"kineto_json_gz", Format::kKinetoGz},
  };
  for (const auto& [label, format] : formats) {
    RegisterBenchmark(fmt::format("Analyze/{}", label).c_str(), BM_Analyze, format)
        ->Arg(k1e5)
        ->Arg(k1e6)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
  for (const auto& [label, format] : formats) {
    RegisterBenchmark(fmt::format("Import/{}", label).c_str(), BM_Import, format)
        ->Arg(k1e6)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
  for (const auto& [label, format] : {formats[0], formats[1]}) {
    for (const AnalysisEntry& a : Analyses()) {
      RegisterBenchmark(fmt::format("Analysis/{}/{}", a.name, label).c_str(), BM_Analysis, format,
                        &a)
          ->Arg(k1e6)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
    }
    RegisterBenchmark(fmt::format("Findings/all/{}", label).c_str(), BM_Findings, format)
        ->Arg(k1e6)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
    RegisterBenchmark(fmt::format("Findings/context/{}", label).c_str(), BM_FindingsContext, format)
        ->Arg(k1e6)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
    for (const FindingRule& rule : FindingRules()) {
      if (!std::holds_alternative<FindingRuleFn<AnalysisContext>>(rule.run)) continue;
      RegisterBenchmark(fmt::format("Findings/{}/{}", rule.id, label).c_str(), BM_FindingRule,
                        format, &rule)
          ->Arg(k1e6)
          ->Unit(benchmark::kMillisecond)
          ->MeasureProcessCPUTime()
          ->UseRealTime();
    }
    RegisterBenchmark(fmt::format("RenderJson/{}", label).c_str(), BM_RenderJson, format)
        ->Arg(k1e6)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
  if (const char* file = std::getenv("SIGHTLINE_NSYS_BENCH_FILE"); file != nullptr && *file != 0) {
    RegisterBenchmark("ImportFile/nsys_sqlite", BM_ImportNsysFile, std::string(file))
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
  RegisterBenchmark("TraceBuilderFinish", BM_TraceBuilderFinish)
      ->ArgNames({"kernels", "reversed"})
      ->Args({k1e6, 0})
      ->Args({k1e6, 1})
      ->Unit(benchmark::kMillisecond)
      ->MeasureProcessCPUTime()
      ->UseRealTime();
}

}  // namespace
}  // namespace sightline

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  sightline::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
