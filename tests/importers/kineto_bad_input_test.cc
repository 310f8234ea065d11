// Tests of the Kineto (PyTorch profiler) JSON importer (src/importers/kineto) on bad inputs (each a
// clear error naming the file), its sniffer, its building blocks (microsecond tokens, memory
// operation names), the real traces against an independent count, ids beyond their range, and a
// large or deep first field.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "importers/importer.h"
#include "importers/inputs.h"
#include "importers/kineto/kineto_events_reader.h"
#include "importers/kineto/kineto_importer.h"
#include "importers/kineto/kineto_names.h"
#include "importers/kineto/kineto_numbers.h"
#include "importers/kineto/kineto_parser.h"
#include "kineto_test_traces.h"
#include "testing/cli_runner.h"
#include "testing/files.h"
#include "testing/status.h"

namespace sightline {
namespace {

using namespace kineto_test;  // NOLINT(build/namespaces)

// ---------------------------------------------------------------- bad input

void ExpectError(const StatusOr<Trace>& t, const std::string& path, const std::string& words) {
  ASSERT_FALSE(t.ok()) << path;
  EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find(words), std::string::npos) << t.status().message();
}

TEST_F(KinetoTest, EmptyFile) {
  const std::string path = Write("empty.json", "");
  ExpectError(ImportKinetoJson(path), path, "empty");
  ExpectError(ImportTrace(path), path, "empty");
}

TEST_F(KinetoTest, MissingFileAndDirectory) {
  StatusOr<Trace> t = ImportKinetoJson(dir_ + "/nope.json");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(ImportKinetoJson(dir_).ok());
}

TEST_F(KinetoTest, JsonThatIsNotATrace) {
  const std::string path = Write("config.json", R"({"model": "llama", "layers": [1, 2, 3]})");
  ExpectError(ImportKinetoJson(path), path, "traceEvents");
  const std::string array = Write("array.json", "[1, 2, 3]");
  ExpectError(ImportKinetoJson(array), array, "its first item is not an event object");
  const std::string not_array = Write("obj.json", R"({"traceEvents": {"a": 1}})");
  ExpectError(ImportKinetoJson(not_array), not_array, "traceEvents is not an array");
}

TEST_F(KinetoTest, TruncatedJsonIsAnErrorAtEveryCutPoint) {
  const std::string json = Slurp(DataPath("basic.json"));
  const std::string path = dir_ + "/cut.json";
  for (size_t cut = 1; cut + 1 < json.size(); cut += 37) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << json.substr(0, cut);
    for (size_t window : {size_t{64}, kineto::EventsReader::kDefaultWindowBytes}) {
      StatusOr<Trace> t = kineto::ImportKinetoJsonWithWindow(path, window);
      ASSERT_FALSE(t.ok()) << "cut at " << cut << " window " << window;
      EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().message();
    }
  }
}

TEST_F(KinetoTest, CorruptJson) {
  const std::string json = Slurp(DataPath("basic.json"));
  const size_t at = json.find("\"name\": \"aten::addmm\"");
  ASSERT_NE(at, std::string::npos);
  const std::vector<std::string> corruptions = {
      json.substr(0, at) + "@@@" + json.substr(at),  // garbage in an event
      json.substr(0, at) + "\"name\" \"aten::addmm\"" + json.substr(at + 21),  // no ':'
      json.substr(0, at - 18) + "}}" + json.substr(at - 18),                   // extra braces
      json + "\n{\"traceEvents\": []}",                                        // two documents
      json.substr(0, json.find("\"traceEvents\"")) + "\"traceEvents\": [1 2]}",
  };
  for (size_t i = 0; i < corruptions.size(); ++i) {
    const std::string path = Write("corrupt" + std::to_string(i) + ".json", corruptions[i]);
    for (size_t window : {size_t{64}, kineto::EventsReader::kDefaultWindowBytes}) {
      StatusOr<Trace> t = kineto::ImportKinetoJsonWithWindow(path, window);
      ASSERT_FALSE(t.ok()) << "corruption " << i << " window " << window;
      EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().message();
    }
  }
}

TEST_F(KinetoTest, TruncatedAndCorruptGzip) {
  const std::string gz = Slurp(DataPath("basic.json.gz"));
  ASSERT_TRUE(IsGzip(gz));
  for (size_t cut : {size_t{2}, size_t{10}, gz.size() / 2, gz.size() - 4}) {
    const std::string path = Write("cut.json.gz", gz.substr(0, cut));
    ExpectError(ImportKinetoJson(path), path, "gzip");
  }
  std::string flipped = gz;
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 16; ++i) flipped[i] ^= 0x5a;
  const std::string corrupt = Write("corrupt.json.gz", flipped);
  ExpectError(ImportKinetoJson(corrupt), corrupt, "gzip");
  const std::string garbage = Write("garbage.json.gz", gz + "trailing garbage");
  ExpectError(ImportKinetoJson(garbage), garbage, "gzip");
}

TEST_F(KinetoTest, GzipThatIsNotJson) {
  // python3 -c "import gzip; print(list(gzip.compress(b'hello, not json\n', mtime=0)))"
  const unsigned char kHello[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
                                  0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0xc8,
                                  0xcb, 0x2f, 0x51, 0xc8, 0x2a, 0xce, 0xcf, 0xe3, 0x02,
                                  0x00, 0x76, 0x68, 0xe5, 0x0c, 0x10, 0x00, 0x00, 0x00};
  const std::string text_gz(reinterpret_cast<const char*>(kHello), sizeof kHello);
  EXPECT_FALSE(SniffKinetoJson(text_gz));
  EXPECT_TRUE(SniffKinetoJson(Slurp(DataPath("basic.json.gz"))));
  const std::string path = Write("hello.gz", text_gz);
  ExpectError(ImportKinetoJson(path), path, "not a JSON object");
}

TEST(KinetoSniff, RecognisesJsonObjectsOnly) {
  EXPECT_TRUE(SniffKinetoJson("{\"traceEvents\": []}"));
  EXPECT_TRUE(SniffKinetoJson("\n  \t{"));
  EXPECT_TRUE(SniffKinetoJson("\xEF\xBB\xBF{"));
  EXPECT_FALSE(SniffKinetoJson("[{}]"));
  EXPECT_FALSE(SniffKinetoJson("SQLite format 3"));
  EXPECT_FALSE(SniffKinetoJson(""));
}

// ---------------------------------------------------------------- building blocks

TEST(KinetoNumbers, MicrosecondTokensConvertExactly) {
  auto ns = [](std::string_view token) {
    int64_t v = -12345;
    return kineto::MicrosTokenToNs(token, &v) ? v : -12345;
  };
  EXPECT_EQ(ns("1365627865398.728"), 1365627865398728);
  EXPECT_EQ(ns("1682725898082228"), 1682725898082228000);
  EXPECT_EQ(ns("68.0"), 68000);
  EXPECT_EQ(ns("0.001"), 1);
  EXPECT_EQ(ns("2.0004"), 2000);  // below half a ns
  EXPECT_EQ(ns("2.0005"), 2001);  // half rounds away from zero
  EXPECT_EQ(ns("-2.0005"), -2001);
  EXPECT_EQ(ns("-5.000"), -5000);
  EXPECT_EQ(ns("1e3"), 1000000);
  EXPECT_EQ(ns("1.5E-3"), 2);
  EXPECT_EQ(ns("1365627865398.7284999"), 1365627865398728);
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("12 \n"), 12000);
  EXPECT_EQ(ns("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(ns("9223372036854775.808"), -12345);  // overflows int64 ns
  EXPECT_EQ(ns("1e30"), -12345);
  for (std::string_view bad : {"", "-", ".5", "1.", "1e", "\"12\"", "12a", "nan", "1.2.3"}) {
    EXPECT_EQ(ns(bad), -12345) << bad;
  }
}

TEST(KinetoNames, ParsesMemoryOperationNames) {
  kineto::MemOpName n;
  ASSERT_TRUE(kineto::ParseMemcpyName("Memcpy HtoD (Pinned -> Device)", &n));
  EXPECT_EQ(n.kind, MemOpKind::kHtoD);
  EXPECT_EQ(n.src, MemoryKind::kPinned);
  EXPECT_EQ(n.dst, MemoryKind::kDevice);
  ASSERT_TRUE(kineto::ParseMemcpyName("Memcpy DtoH (Device -> Pageable)", &n));
  EXPECT_EQ(n.kind, MemOpKind::kDtoH);
  EXPECT_EQ(n.dst, MemoryKind::kPageable);
  ASSERT_TRUE(kineto::ParseMemcpyName("Memcpy AtoD (Array -> Device Static)", &n));
  EXPECT_EQ(n.kind, MemOpKind::kDtoD);
  EXPECT_EQ(n.src, MemoryKind::kArray);
  EXPECT_EQ(n.dst, MemoryKind::kDevice);
  ASSERT_TRUE(kineto::ParseMemsetName("Memset (Managed)", &n));
  EXPECT_EQ(n.kind, MemOpKind::kMemset);
  EXPECT_EQ(n.dst, MemoryKind::kManaged);
  EXPECT_FALSE(kineto::ParseMemcpyName("Memcpy XtoY (Device -> Device)", &n));
  EXPECT_FALSE(kineto::ParseMemcpyName("cudaMemcpy", &n));
  EXPECT_FALSE(kineto::ParseMemsetName("Memset", &n));
}

// ---------------------------------------------------------------- real traces

struct RealTrace {
  const char* file;
  size_t kernels, linked, memops, api_calls, ranges;
  int32_t rank, world_size;
};

// Expected counts are an independent count with Python's json module, per file:
//   python3 -c "import gzip,json,sys; e=json.load(gzip.open(sys.argv[1]))['traceEvents'];
//     X=[x for x in e if x.get('ph')=='X']; c=lambda *k: sum(x.get('cat') in k for x in X);
//     corr={x['args'].get('correlation') for x in X if x.get('cat') in
//     ('cuda_runtime','cuda_driver')}; print(c('kernel'), sum(x.get('cat')=='kernel' and
//     x['args'].get('correlation') in corr for x in X),
//           c('gpu_memcpy','gpu_memset'), c('cuda_runtime','cuda_driver'),
//           c('cpu_op','user_annotation','python_function'))" FILE
constexpr RealTrace kRealTraces[] = {
    {"kineto_vllm_b200_tp8_rank0.json.gz", 768, 768, 161, 1372, 20042, 0, 8},
    {"kineto_hf_qwen0.5b_h100.json.gz", 1465, 1029, 242, 1922, 8449, -1, 0},
    {"kineto_hta_sampled_rank0.json.gz", 1154, 1154, 50, 1204, 2402, 0, 128},
    {"kineto_hta_sampled_rank1.json.gz", 1104, 1104, 50, 1154, 2367, 1, 128},
    {"kineto_hta_nccl_a100_rank0.json.gz", 2700, 2700, 1074, 8740, 14388, 0, 2},
    {"kineto_hta_diff_control.json.gz", 8568, 8568, 882, 24692, 40794, 3, 8},
    {"kineto_hta_diff_test.json.gz", 9876, 9330, 5756, 21167, 31524, 1, 2},
};

TEST(KinetoRealTraces, CountsMatchAnIndependentCount) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces not present";
  for (const RealTrace& r : kRealTraces) {
    const std::string path = dir + "/" + r.file;
    if (!std::filesystem::exists(path)) continue;
    StatusOr<Trace> t = ImportTrace(path);
    ASSERT_TRUE(t.ok()) << t.status().message();
    size_t linked = 0;
    for (int32_t call : t->kernels.launch_call) linked += call != kNoRow;
    EXPECT_EQ(t->kernels.size(), r.kernels) << r.file;
    EXPECT_EQ(linked, r.linked) << r.file;
    EXPECT_EQ(t->memops.size(), r.memops) << r.file;
    EXPECT_EQ(t->api_calls.size(), r.api_calls) << r.file;
    EXPECT_EQ(t->ranges.size(), r.ranges) << r.file;
    EXPECT_EQ(t->source.rank, r.rank) << r.file;
    EXPECT_EQ(t->source.world_size, r.world_size) << r.file;
    EXPECT_EQ(Count(*t, DiagCode::kKinetoInvalidEvent), 0) << r.file;
    EXPECT_EQ(Count(*t, DiagCode::kNegativeDuration), 0) << r.file;
    EXPECT_EQ(Count(*t, DiagCode::kKernelWithoutLaunch),
              static_cast<int64_t>(r.kernels - r.linked));
  }
}

TEST(KinetoRealTraces, TimesAreEpochNanoseconds) {
  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces not present";
  // vLLM (2025 Kineto): ts relative to baseTimeNanoseconds 1767189312000000000, first event at
  // "ts": 1365627862757.064. HTA nccl (2024): baseTimeNanoseconds 1711964646000000000 after
  // traceEvents, first event at "ts": 4458676416788.066.
  StatusOr<Trace> vllm = ImportTrace(dir + "/kineto_vllm_b200_tp8_rank0.json.gz");
  ASSERT_TRUE(vllm.ok()) << vllm.status().message();
  EXPECT_EQ(vllm->begin_ns(), 1767189312000000000 + 1365627862757064);
  StatusOr<Trace> nccl = ImportTrace(dir + "/kineto_hta_nccl_a100_rank0.json.gz");
  ASSERT_TRUE(nccl.ok()) << nccl.status().message();
  EXPECT_EQ(nccl->begin_ns(), 1711964646000000000 + 4458676416788066);
}

// A kernel's args.device or args.stream beyond int64 was read as absent, and the kernel went to
// the device and stream of its pid and tid (here 0 and 7, where the good kernel runs); one beyond
// int32 likewise. Each is dropped and counted (kineto_gpu_id_out_of_range); none is reassigned.
TEST_F(KinetoTest, GpuIdsBeyondTheirRangeAreCountedNotReassigned) {
  auto kernel = [](const std::string& name, const std::string& device, const std::string& stream) {
    return R"({"ph": "X", "cat": "kernel", "name": ")" + name +
           R"(", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"device": )" + device +
           R"(, "stream": )" + stream + "}}";
  };
  const std::string json =
      R"({"schemaVersion": 1, "traceEvents": [)" + kernel("good", "0", "7") + ",\n" +
      kernel("device_past_int64", "99999999999999999999", "7") + ",\n" +
      kernel("device_past_int32", "4294967296", "7") + ",\n" +
      kernel("stream_past_int64", "0", "-99999999999999999999") + ",\n" +
      kernel("stream_not_a_number", "0", R"("seven")") + ",\n" +
      kernel("memcpy_like_kernel", "18446744073709551616", "18446744073709551616") + "]}";
  const Trace t = MustImport(Write("ids.json", json));
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.str(t.kernels.name[0]), "good");
  EXPECT_EQ(Count(t, DiagCode::kKinetoGpuIdOutOfRange), 5);
  EXPECT_EQ(Count(t, DiagCode::kKinetoGpuArgsMissing), 0);
}

// Real traces put metadata before traceEvents. A first field larger than the 64 KiB head the
// format is recognised from, or nested deeper than it, left no key naming the format in the head,
// and the trace was "not a format Sightline reads". It is now taken as Kineto, read, and its
// first field skipped without recursion.
TEST_F(KinetoTest, ALargeOrDeepFirstFieldIsRecognisedAndRead) {
  std::ifstream in(DataPath("basic.json"));
  std::string basic((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t brace = basic.find('{');
  ASSERT_NE(brace, std::string::npos);
  const std::string fields = basic.substr(brace + 1);
  std::string object = "{";
  for (int i = 0; i < 20000; ++i) object += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 1";
  object += "}";
  const std::pair<std::string, std::string> cases[] = {
      {"long_string.json", "{\"metadata\": \"" + std::string(200000, 'x') + "\", " + fields},
      {"deep.json",
       "{\"metadata\": " + std::string(100000, '[') + std::string(100000, ']') + ", " + fields},
      {"large_object.json", "{\"metadata\": " + object + ", " + fields},
  };
  const size_t kernels = MustImport(DataPath("basic.json")).kernels.size();
  for (const auto& [name, text] : cases) {
    const std::string path = Write(name, text);
    StatusOr<RecognisedInput> r = RecogniseInput(path);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message().substr(0, 200);
    EXPECT_STREQ(r->reader->name, "kineto-json") << name;
    StatusOr<Trace> t = ImportTrace(path);
    ASSERT_TRUE(t.ok()) << name << ": " << t.status().message().substr(0, 300);
    EXPECT_EQ(t->kernels.size(), kernels) << name;
  }
  // JSON of another kind with a small first field is still not taken.
  StatusOr<RecognisedInput> other =
      RecogniseInput(Write("config.json", R"({"model": "x", "n": 2})"));
  EXPECT_FALSE(other.ok());
}

}  // namespace
}  // namespace sightline
