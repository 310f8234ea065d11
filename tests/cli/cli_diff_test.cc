// End-to-end checks of `sightline diff`: the --fail-if-slower gate's exit codes and named items,
// JSON output, cross-format samples, and bad input (exit 2, no output file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/cli_runner.h"
#include "testing/files.h"

namespace sightline {
namespace {

using testing::RunSightline;

struct KernelSpec {
  std::string name;
  double dur_us;
  int calls;
};

// A minimal PyTorch profiler (Kineto) trace: kernels back to back on device 0, stream 7.
std::string KinetoTrace(const std::vector<KernelSpec>& kernels) {
  std::string events;
  double ts = 1000;
  int correlation = 1;
  for (const KernelSpec& k : kernels) {
    for (int c = 0; c < k.calls; ++c) {
      if (!events.empty()) events += ",\n";
      events += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + k.name +
                "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(ts) +
                ", \"dur\": " + std::to_string(k.dur_us) +
                ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " +
                std::to_string(correlation++) + "}}";
      ts += k.dur_us + 1;
    }
  }
  return "{\"schemaVersion\": 1, \"traceEvents\": [\n" + events + "\n]}\n";
}

class CliDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    baseline_ = dir_ + "/baseline.json";
    candidate_ = dir_ + "/candidate.json";
    // gemm grows 30%; "tiny" (under 1% of the baseline) grows 10x; "old" vanishes, "new" appears.
    Write(baseline_, KinetoTrace({{"void gemm_kernel<float, 128>(float*, int)", 100, 10},
                                  {"rms_norm_kernel", 50, 10},
                                  {"tiny_kernel", 1, 1},
                                  {"old_kernel", 20, 2}}));
    Write(candidate_, KinetoTrace({{"void gemm_kernel<float, 128>(float*, int)", 130, 10},
                                   {"rms_norm_kernel", 50, 10},
                                   {"tiny_kernel", 10, 1},
                                   {"new_kernel", 20, 2}}));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static void Write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  std::string Args(const std::string& extra) const {
    return "diff '" + baseline_ + "' '" + candidate_ + "' " + extra;
  }

  std::string dir_, baseline_, candidate_;
};

TEST_F(CliDiff, GateAtTenFailsAndNamesTheKernel) {
  testing::CliResult r = RunSightline(Args("--fail-if-slower 10"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
  EXPECT_NE(r.out.find("gemm_kernel"), std::string::npos);
  EXPECT_NE(r.err.find("gemm_kernel<float,128> +30.0%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPU time"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("tiny_kernel"), std::string::npos) << r.err;  // under 1%: not gated
  EXPECT_NE(r.out.find("new_kernel"), std::string::npos);            // appeared
  EXPECT_NE(r.out.find("old_kernel"), std::string::npos);            // vanished
}

TEST_F(CliDiff, GateAtFiftyPasses) {
  testing::CliResult r = RunSightline(Args("--fail-if-slower 50"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pass"), std::string::npos);
  // Without a gate the diff only reports.
  EXPECT_EQ(RunSightline(Args("")).exit_code, 0);
}

TEST_F(CliDiff, JsonToFile) {
  const std::string out = dir_ + "/diff.json";
  testing::CliResult r = RunSightline(Args("--format json -o '" + out + "' --fail-if-slower 10"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string json = testing::Slurp(out);
  EXPECT_NE(json.find("\"schema_version\""), std::string::npos);
  EXPECT_NE(json.find("\"diff_kernels\""), std::string::npos);
  EXPECT_NE(json.find("\"diff_gate\""), std::string::npos);
  EXPECT_NE(json.find("\"result\": \"FAIL\""), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("\"appeared\""), std::string::npos);
}

TEST_F(CliDiff, BadInputExitsTwoWithoutOutput) {
  const std::string out = dir_ + "/diff.txt";
  const std::string not_trace = dir_ + "/notes.txt";
  Write(not_trace, "hello, this is not a trace\n");
  const std::vector<std::string> cases = {
      "diff /nonexistent/a.sqlite '" + candidate_ + "' -o '" + out + "'",
      "diff '" + baseline_ + "' '" + not_trace + "' -o '" + out + "'",
      Args("--fail-if-slower abc -o '" + out + "'"),
      Args("--fail-if-slower -5 -o '" + out + "'"),
      "diff '" + baseline_ + "' -o '" + out + "'",  // one trace only
  };
  for (const std::string& args : cases) {
    testing::CliResult r = RunSightline(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
  testing::CliResult missing = RunSightline(cases[0]);
  EXPECT_NE(missing.err.find("/nonexistent/a.sqlite"), std::string::npos) << missing.err;
}

TEST(CliDiffSamples, NsysAgainstPyTorch) {
  const std::string dir = std::string(SIGHTLINE_SOURCE_DIR) + "/examples/samples/";
  testing::CliResult r = RunSightline("diff '" + dir + "llama_decode_h100.nsys.sqlite' '" + dir +
                                      "llama_decode_h100.pytorch.json.gz'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Slower in the candidate"), std::string::npos);
  EXPECT_NE(r.out.find("per_iteration"), std::string::npos);
  EXPECT_NE(r.out.find("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), std::string::npos);
}

}  // namespace
}  // namespace sightline
