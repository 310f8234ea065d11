// The front door (importers/inputs.h): every shipped sample is taken by the reader of its format,
// from its content, plain, gzip'd and zstd'd alike; a file of no format is refused with a message
// that says what it looks like; a file of the wrong kind for an option says what it is; analyze
// sorts a mix of inputs and says which reader took each.
#include "importers/inputs.h"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>

#include "base/file_io.h"
#include "base/input_data.h"
#include "base/input_limits.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = SIGHTLINE_SOURCE_DIR;

struct Sample {
  const char* path;    // under the source tree
  const char* reader;  // the registry name expected to take it
};

// One file of every reader, from the samples and test data the project ships.
const Sample kSamples[] = {
    {"examples/samples/llama_decode_h100.nsys.sqlite", "nsys-sqlite"},
    {"examples/samples/llama_decode_h100.pytorch.json.gz", "kineto-json"},
    {"tests/data/kineto/pytorch1.9_kineto_resnet50_trim.json.gz", "kineto-json"},
    {"tests/data/kineto/bare_array.json", "kineto-json"},
    {"examples/samples/serving_loop_h100.slrec", "sightline-recorder"},
    {"tests/data/torch_snapshot/h200_plain.pickle", "torch-memory-snapshot"},
    {"examples/samples/serving_loop_h100.requests.jsonl", "request-log"},
    {"examples/samples/serving_loop_h100.iterations.jsonl", "sightline-iteration-log"},
    {"tests/data/serving/vllm_detailed_small.json", "vllm-bench-results"},
    {"tests/data/serving/sglang_bench_serving_small.jsonl", "sglang-bench-serving"},
    {"tests/data/serving/aiperf_profile_export_small.jsonl", "aiperf-records"},
    {"tests/data/serving/trtllm_bench_report_small.json", "trtllm-bench-report"},
    {"fuzz/seeds/iteration_log/trtllm_py.log", "trtllm-iteration-stats"},
    {"fuzz/seeds/iteration_log/trtllm_cpp.log", "trtllm-iteration-stats"},
    {"tests/data/trt/tiny.engine.graph.json", "trt-engine-export"},
    {"tests/data/trt/tiny.engine.profile.json", "trt-engine-export"},
    {"tests/data/trt/tiny.engine.timing.json", "trt-engine-export"},
    {"tests/data/ncu/h100_torch_full_details.csv.gz", "ncu-csv"},
    {"tests/data/ncu/h100_torch_full_raw.csv.gz", "ncu-csv"},
    {"examples/case_studies/fp8_block_quant/results/ncu_before_source_sass.csv", "ncu-source-csv"},
    {"fuzz/seeds/sweep_csv/grid.csv", "allreduce-sweep-csv"},
    {"tests/data/model_config/llama_3_2_1b.config.json", "hf-model-config"},
};

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("sightline_inputs_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, std::string_view bytes) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string Gzip(std::string_view bytes) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string out(libdeflate_gzip_compress_bound(c, bytes.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, bytes.data(), bytes.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

std::string Zstd(std::string_view bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string ReaderOf(const std::string& path) {
  StatusOr<RecognisedInput> in = RecogniseInput(path);
  return in.ok() ? in->reader->name : "error: " + in.status().message();
}

TEST(Inputs, EveryShippedSampleIsTakenByItsReader) {
  for (const Sample& s : kSamples) {
    EXPECT_EQ(ReaderOf(kRoot + "/" + s.path), s.reader) << s.path;
  }
}

TEST(Inputs, EveryReaderHasASample) {
  for (const InputReaderEntry& r : InputReaders()) {
    bool found = false;
    for (const Sample& s : kSamples) found |= std::string(s.reader) == r.name;
    EXPECT_TRUE(found) << r.name << " has no sample in kSamples";
  }
}

// Every sample, inflated and compressed again both ways, is taken by the same reader and read to
// the same document.
TEST(Inputs, GzipAndZstdAreReadForEveryKind) {
  TempDir dir;
  for (const Sample& s : kSamples) {
    const std::string original = kRoot + "/" + s.path;
    StatusOr<std::string> plain = ReadInput(original);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    const std::string name = fs::path(s.path).filename().string();
    // TensorRT exports find their siblings by name: keep the suffix, add the compression's.
    const std::string p = dir.Write(name + ".plain", *plain);
    const std::string gz = dir.Write(name + ".gz", Gzip(*plain));
    const std::string zst = dir.Write(name + ".zst", Zstd(*plain));
    for (const std::string& f : {p, gz, zst}) {
      EXPECT_EQ(ReaderOf(f), s.reader) << f;
    }
    StatusOr<InputDocument> a = OpenInput(p);
    StatusOr<InputDocument> b = OpenInput(zst);
    ASSERT_TRUE(a.ok()) << s.path << ": " << a.status().ToString();
    ASSERT_TRUE(b.ok()) << s.path << ": " << b.status().ToString();
    EXPECT_EQ(a->value.index(), b->value.index());
    if (const auto* ta = std::get_if<Trace>(&a->value)) {
      const Trace& tb = std::get<Trace>(b->value);
      EXPECT_EQ(ta->kernels.size(), tb.kernels.size()) << s.path;
      EXPECT_EQ(ta->api_calls.size(), tb.api_calls.size()) << s.path;
      EXPECT_EQ(ta->memory_events.size(), tb.memory_events.size()) << s.path;
    }
    if (const auto* ra = std::get_if<RequestResults>(&a->value)) {
      EXPECT_EQ(ra->requests.size(), std::get<RequestResults>(b->value).requests.size()) << s.path;
    }
  }
}

TEST(Inputs, CorruptCompressionIsAClearError) {
  TempDir dir;
  StatusOr<std::string> plain = ReadInput(kRoot + "/tests/data/serving/vllm_detailed_small.json");
  ASSERT_TRUE(plain.ok());
  std::string zst = Zstd(*plain);
  const std::string cut = dir.Write("cut.zst", zst.substr(0, zst.size() / 2));
  StatusOr<std::string> r = ReadInput(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("zstd data is truncated"), std::string::npos)
      << r.status().message();
}

TEST(Inputs, UnknownAndEmptyFilesSayWhatTheyAre) {
  TempDir dir;
  StatusOr<RecognisedInput> json = RecogniseInput(dir.Write("config.json", R"({"model": "x"})"));
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("it is JSON, but none of the JSON formats"),
            std::string::npos)
      << json.status().message();
  EXPECT_NE(json.status().message().find("vLLM"), std::string::npos);  // the list of formats
  StatusOr<RecognisedInput> empty = RecogniseInput(dir.Write("empty.zst", Zstd("")));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("(once decompressed) empty"), std::string::npos)
      << empty.status().message();
}

TEST(Inputs, AKindThatDoesNotFitSaysWhatTheFileIs) {
  StatusOr<InputDocument> d = OpenInputOfKind(
      kRoot + "/tests/data/serving/vllm_detailed_small.json", InputKind::kTrace, "export");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("this file is of the kind 'serving results'"),
            std::string::npos)
      << d.status().message();
}

TEST(Inputs, AnalyzeSortsAMixAndSaysWhatItRead) {
  TempDir dir;
  // A directory with a trace, its request log and iteration log, and a note: all by content.
  for (const char* f : {"serving_loop_h100.slrec", "serving_loop_h100.requests.jsonl",
                        "serving_loop_h100.iterations.jsonl"}) {
    StatusOr<std::string> bytes = ReadInput(kRoot + "/examples/samples/" + f);
    ASSERT_TRUE(bytes.ok());
    dir.Write(f, *bytes);
  }
  dir.Write("README.txt", "notes");
  testing::CliResult r =
      testing::RunSightline("analyze --format json '" + dir.path().string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"reader\": \"request-log\""), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("\"reader\": \"sightline-iteration-log\""), std::string::npos);
  EXPECT_NE(r.out.find("README.txt"), std::string::npos);  // skipped, and named
  EXPECT_NE(r.out.find("\"key\": \"serving\""), std::string::npos);
  // The same files given with their options make the same serving section.
  testing::CliResult named =
      testing::RunSightline("analyze --format json '" + kRoot +
                            "/examples/samples/serving_loop_h100.slrec' --requests '" + kRoot +
                            "/examples/samples/serving_loop_h100.requests.jsonl'");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  // --requests with a trace is refused, saying what the file is.
  testing::CliResult wrong = testing::RunSightline(
      "analyze '" + kRoot + "/examples/samples/serving_loop_h100.slrec' --requests '" + kRoot +
      "/examples/samples/llama_decode_h100.nsys.sqlite'");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(
      wrong.err.find(
          "--requests takes the kind 'serving results', but this file is of the kind 'trace'"),
      std::string::npos)
      << wrong.err;
}

TEST(Inputs, FormatsCommandListsEveryReader) {
  testing::CliResult r = testing::RunSightline("formats");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const InputReaderEntry& e : InputReaders()) {
    EXPECT_NE(r.out.find(e.name), std::string::npos) << e.name;
  }
  testing::CliResult one = testing::RunSightline(
      "formats '" + kRoot + "/examples/samples/llama_decode_h100.pytorch.json.gz'");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("kineto-json (trace, gzip)"), std::string::npos) << one.out;
}

}  // namespace
}  // namespace sightline

namespace sightline {
namespace {

// A pipe or a device is refused at the door with what to do, before anything is read from it.
TEST(Inputs, PipesAndDevicesAreRefusedWithWhatToDo) {
  for (const char* dev : {"/dev/zero", "/dev/null"}) {
    StatusOr<RecognisedInput> in = RecogniseInput(dev);
    ASSERT_FALSE(in.ok()) << dev;
    EXPECT_EQ(in.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(in.status().message().find("not a regular file (a device)"), std::string::npos)
        << in.status().message();
  }
  TempDir dir;
  const std::string fifo = (dir.path() / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  StatusOr<RecognisedInput> in = RecogniseInput(fifo);  // must not block on the open
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("a pipe"), std::string::npos) << in.status().message();
  testing::CliResult r = testing::RunSightline("analyze /dev/zero");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
}

// Every command that reads a file reads it through the same door: /dev/zero is refused before
// anything is read, and a gzip bomb of each door's own format stops at the input limit (issue 34:
// `ncu`, `--requests`, `--iteration-log` and `allreduce tune` died of std::bad_alloc on both).
TEST(Inputs, EveryDoorRefusesDevicesAndStopsBombs) {
  const std::string trace = "'" + kRoot + "/tests/data/kineto/basic.json'";
  TempDir dir;
  const std::string out = (dir.path() / "out").string();
  // Each door with a shipped file of its format.
  struct Door {
    std::string command;  // {} stands for the input
    const char* sample;   // a file that door takes
  };
  const Door doors[] = {
      {"analyze {}", "tests/data/kineto/basic.json"},
      {"export --perfetto -o '" + out + "' {}", "tests/data/kineto/basic.json"},
      {"diff " + trace + " {}", "tests/data/kineto/basic.json"},
      {"ncu {}", "tests/data/ncu/h100_torch_full_details.csv.gz"},
      {"analyze " + trace + " --requests {}", "tests/data/serving/vllm_detailed_small.json"},
      {"analyze " + trace + " --iteration-log {}",
       "examples/samples/serving_loop_h100.iterations.jsonl"},
      {"allreduce tune -o '" + out + ".h' {}", "fuzz/seeds/sweep_csv/grid.csv"},
  };
  auto with = [](const std::string& command, const std::string& input) {
    std::string c = command;
    c.replace(c.find("{}"), 2, "'" + input + "'");
    return c;
  };
  for (const Door& d : doors) {
    testing::CliResult r = testing::RunSightline(with(d.command, "/dev/zero"));
    EXPECT_EQ(r.exit_code, 2) << d.command;
    EXPECT_NE(r.err.find("/dev/zero: not a regular file (a device)"), std::string::npos)
        << d.command << ": " << r.err;
    EXPECT_EQ(r.out, "") << d.command;

    // The door's own sample followed by 64 MiB of blanks (JSON and CSV readers take them as
    // trailing space; the limit must stop the inflation first), in ~70 KB of gzip, against 16 MiB.
    std::ifstream in(kRoot + "/" + d.sample, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(bytes.empty()) << d.sample;
    if (bytes.starts_with("\x1f\x8b")) {
      StatusOr<std::string> plain = GunzipToString(bytes, d.sample);
      ASSERT_TRUE(plain.ok()) << plain.status().message();
      bytes = *plain;
    }
    const std::string bomb = dir.Write("bomb.gz", Gzip(bytes + std::string(64 << 20, ' ')));
    ASSERT_LT(fs::file_size(bomb), 1u << 20);
    ::setenv(kMaxInputSizeEnv, "16M", 1);
    r = testing::RunSightline(with(d.command, bomb));
    ::unsetenv(kMaxInputSizeEnv);
    EXPECT_EQ(r.exit_code, 2) << d.command << ": " << r.err;
    EXPECT_NE(r.err.find("inflates to more than 16777216 bytes"), std::string::npos)
        << d.command << ": " << r.err;
    EXPECT_EQ(r.out, "") << d.command;
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".h"));
}

}  // namespace
}  // namespace sightline
