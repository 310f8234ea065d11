// Replays every input under tests/data/fuzz_regressions/<target>/ through the reader that the
// libFuzzer target of that name (fuzz/<target>.cc) calls. Each input once made a reader crash,
// hang or trip a sanitizer (docs/testing.md lists them); here it must come back as a trace or as
// an error that names the file, in the normal build and under ASan+UBSan (build-asan).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "importers/allreduce_sweep/sweep_csv.h"
#include "importers/iteration_log/iteration_log.h"
#include "importers/kineto/kineto_parser.h"
#include "importers/ncu/ncu_csv.h"
#include "importers/ncu/ncu_source.h"
#include "importers/nsys/nsys_gpu_metrics_config.h"
#include "importers/nsys/nsys_importer.h"
#include "importers/recorder/recorder_importer.h"
#include "importers/serving_results/request_log.h"
#include "importers/serving_results/request_results.h"
#include "importers/torch_snapshot/torch_snapshot_importer.h"
#include "importers/trt_engine/trt_engine.h"
#include "kernel/ncu_analysis.h"
#include "kernel/ncu_report.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

// The outcome of one reader on one input: ok, or an error whose message names `path`.
void ExpectHandled(const Status& status, const std::string& path) {
  if (!status.ok()) {
    EXPECT_NE(status.message().find(path), std::string::npos) << status.ToString();
  }
}

std::string WriteTemp(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// What each fuzz target does with its input (the same calls as fuzz/<target>.cc).
using Replay = std::function<void(const std::string& bytes, const std::string& tmp)>;
const std::map<std::string, Replay>& Replays() {
  static const auto* replays = new std::map<std::string, Replay>{
      {"fuzz_nsys_sqlite",
       [](const std::string& bytes, const std::string& tmp) {
         const std::string path = WriteTemp(tmp, "input.sqlite", bytes);
         ExpectHandled(ImportNsysSqlite(path, {}).status(), path);
       }},
      {"fuzz_kineto_json",
       [](const std::string& bytes, const std::string& tmp) {
         const std::string path = WriteTemp(tmp, "input.json", bytes);
         ExpectHandled(
             kineto::ImportKinetoJsonWithWindow(path, size_t{64} << (bytes.size() % 8)).status(),
             path);
       }},
      {"fuzz_recorder",
       [](const std::string& bytes, const std::string&) {
         ExpectHandled(ImportRecorderBytes(bytes, "input.slrec").status(), "input.slrec");
       }},
      {"fuzz_ncu_csv",
       [](const std::string& bytes, const std::string&) {
         if (LooksLikeNcuSourceCsv(bytes)) {  // the source page, as fuzz_ncu_csv reads it
           StatusOr<NcuSourceExport> src = ParseNcuSourceCsv(bytes, "input.csv");
           ExpectHandled(src.status(), "input.csv");
           if (src.ok()) {
             Report report;
             AddNcuSourceSections(report, {*src}, 5);
           }
           return;
         }
         StatusOr<NcuExport> ncu = ParseNcuCsv(bytes, "input.csv");
         ExpectHandled(ncu.status(), "input.csv");
         if (ncu.ok()) {
           for (const NcuKernel& kernel : ncu->kernels) (void)AnalyzeNcuKernel(kernel);
         }
       }},
      {"fuzz_sweep_csv",
       [](const std::string& bytes, const std::string&) {
         ExpectHandled(ParseSweepCsv(bytes, "input.csv").status(), "input.csv");
       }},
      {"fuzz_iteration_log",
       [](const std::string& bytes, const std::string&) {
         ExpectHandled(ParseIterationLog(bytes, "input.log").status(), "input.log");
       }},
      {"fuzz_requests",
       [](const std::string& bytes, const std::string&) {
         (void)LooksLikeRequestLog(bytes);
         ExpectHandled(ParseRequestLog(bytes, "input.jsonl").status(), "input.jsonl");
         ExpectHandled(ParseRequestResults(bytes, "input.json").status(), "input.json");
       }},
      {"fuzz_gpu_metrics_config",
       [](const std::string& bytes, const std::string&) {
         const std::vector<GpuMetricSet> sets = ParseGpuMetricsConfig(bytes);
         (void)PickGpuMetricSet(sets, {}, "GH100");
       }},
      {"fuzz_torch_snapshot",
       [](const std::string& bytes, const std::string&) {
         ExpectHandled(ImportTorchSnapshotBytes(bytes, "input.pickle").status(), "input.pickle");
       }},
      {"fuzz_trt",
       [](const std::string& bytes, const std::string&) {
         Diagnostics diagnostics;
         ExpectHandled(ParseTrtGraph(bytes, "input.json", diagnostics).status(), "input.json");
         ExpectHandled(ParseTrtProfile(bytes, "input.json", diagnostics).status(), "input.json");
         ExpectHandled(ParseTrtTiming(bytes, "input.json", diagnostics).status(), "input.json");
         for (TrtFileKind kind : {TrtFileKind::kDeviceMetadata, TrtFileKind::kBuildMetadata,
                                  TrtFileKind::kProfileMetadata}) {
           TrtMetadata metadata;
           ExpectHandled(ParseTrtMetadata(bytes, kind, "input.json", metadata, diagnostics),
                         "input.json");
         }
       }},
  };
  return *replays;
}

TEST(FuzzRegressions, EveryInputIsHandled) {
  const fs::path root = fs::path(SIGHTLINE_SOURCE_DIR) / "tests/data/fuzz_regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  const std::string tmp = testing::MakeTempDir();
  int inputs = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const std::string target = dir.path().filename().string();
    auto replay = Replays().find(target);
    ASSERT_NE(replay, Replays().end()) << "no replay for " << target << " (add it here)";
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path())) {
      SCOPED_TRACE(file.path().string());
      std::ifstream in(file.path(), std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      replay->second(bytes.str(), tmp);
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 0);
}

}  // namespace
}  // namespace sightline
