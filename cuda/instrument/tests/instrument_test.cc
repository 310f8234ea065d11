// Tests of the instrument library's configuration parsing, profiling window, rank selection and
// iteration log, against a fake CUDA driver (fake_cuda_driver.c) or a missing one. CPU only.
#include "sightline/instrument.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config.h"
#include "shared/recorder_env.h"
#include "testing.h"

namespace sightline::instrument {
namespace {

// ---- parsing
// --------------------------------------------------------------------------------------

TEST(InstrumentWindowSpec, ParsesRangesAndSingles) {
  std::vector<WindowRange> r;
  std::string error;
  ASSERT_TRUE(ParseWindowSpec("100-110, 10-20 ,7", &r, &error)) << error;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].start, 7);
  EXPECT_EQ(r[0].stop, 7);
  EXPECT_EQ(r[1].start, 10);
  EXPECT_EQ(r[1].stop, 20);
  EXPECT_EQ(r[2].start, 100);
  EXPECT_EQ(r[2].stop, 110);
}

TEST(InstrumentWindowSpec, RejectsBadSpecsWithAReason) {
  const struct {
    const char* spec;
    const char* reason;
  } cases[] = {{"", "empty"},
               {"10-", "not a range"},
               {"-5", "not a range"},
               {"20-10", "ends before it starts"},
               {"abc", "not an iteration number"},
               {"1-5,3-8", "overlap"},
               {"1,,2", "empty item at character 3"},
               {"1-2-3", "not a range"},
               {"5-6,", "empty item"}};
  for (const auto& c : cases) {
    std::vector<WindowRange> r = {{1, 2}};
    std::string error;
    EXPECT_FALSE(ParseWindowSpec(c.spec, &r, &error)) << c.spec;
    EXPECT_TRUE(r.empty()) << c.spec;
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.spec << ": " << error;
  }
}

TEST(InstrumentRankList, ParsesListsRangesAndAll) {
  std::vector<int> ranks;
  bool all = true;
  std::string error;
  ASSERT_TRUE(ParseRankList("3,0,1-2,3", &ranks, &all, &error)) << error;
  EXPECT_FALSE(all);
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_TRUE(ParseRankList("all", &ranks, &all, &error));
  EXPECT_TRUE(all);
  EXPECT_TRUE(ranks.empty());
  EXPECT_FALSE(ParseRankList("0,x", &ranks, &all, &error));
  EXPECT_NE(error.find("'x'"), std::string::npos) << error;
}

TEST(InstrumentNvtxLevel, AcceptsNumbersAndNames) {
  int level = -1;
  EXPECT_TRUE(ParseNvtxLevel("0", &level));
  EXPECT_EQ(level, 0);
  EXPECT_TRUE(ParseNvtxLevel("verbose", &level));
  EXPECT_EQ(level, 2);
  EXPECT_FALSE(ParseNvtxLevel("3", &level));
  EXPECT_FALSE(ParseNvtxLevel("", &level));
}

const char* FakeEnv(const char* name) {
  static const std::pair<const char*, const char*> kVars[] = {
      {"SLURM_PROCID", "5"}, {"RANK", "7"}, {"LOCAL_RANK", "1"}, {"PMI_RANK", "bad"}};
  for (const auto& [k, v] : kVars) {
    if (std::string(k) == name) return v;
  }
  return nullptr;
}

TEST(InstrumentRank, TakesTheFirstValidVariableInOrder) {
  // OMPI_COMM_WORLD_RANK unset, PMI_RANK not a number: SLURM_PROCID wins over RANK and LOCAL_RANK.
  EXPECT_EQ(recenv::DetectRank(&FakeEnv), 5);
  EXPECT_EQ(recenv::DetectRank([](const char*) -> const char* { return nullptr; }), -1);
  // Blanks around the number are allowed; anything else makes the variable not count.
  EXPECT_EQ(
      recenv::DetectRank([](const char* n) -> const char* {
        return std::string(n) == "RANK" ? " 3 " : std::string(n) == "PMI_RANK" ? "2x" : nullptr;
      }),
      3);
}

TEST(InstrumentLogPath, ExpandsPidAndRank) {
  EXPECT_EQ(ExpandLogPath("/tmp/it-%p-%r.jsonl", 42, 3), "/tmp/it-42-3.jsonl");
  EXPECT_EQ(ExpandLogPath("a%%r-%r", 1, -1), "a%r-0");
  EXPECT_EQ(ExpandLogPath("end%", 1, 0), "end%");
}

// ---- behaviour through the C API
// -------------------------------------------------------------------

constexpr const char* kManagedVariables[] = {"SIGHTLINE_NVTX_LEVEL",
                                             "SIGHTLINE_PROFILE_START_STOP",
                                             "SIGHTLINE_PROFILE_RANKS",
                                             "SIGHTLINE_ITERATION_LOG",
                                             "SIGHTLINE_REQUEST_LOG",
                                             "OMPI_COMM_WORLD_RANK",
                                             "PMI_RANK",
                                             "SLURM_PROCID",
                                             "RANK",
                                             "LOCAL_RANK"};

struct FakeDriver {
  void* handle = dlopen(SIGHTLINE_FAKE_DRIVER, RTLD_NOW | RTLD_LOCAL);
  const char* (*events)() = handle
                                ? reinterpret_cast<const char* (*)()>(dlsym(handle,
                                                                            "fake_driver_events"))
                                : nullptr;
  void (*reset)(int) = handle ? reinterpret_cast<void (*)(int)>(dlsym(handle, "fake_driver_reset"))
                              : nullptr;
};

class InstrumentEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kManagedVariables) unsetenv(v);
    ASSERT_NE(driver_.events, nullptr) << dlerror();
    driver_.reset(1);
    SetDriverLibraryForTesting(SIGHTLINE_FAKE_DRIVER);
    dir_ = std::filesystem::temp_directory_path() /
           ("sightline_instrument_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (const char* v : kManagedVariables) unsetenv(v);
    ReloadForTesting();
    SetDriverLibraryForTesting("libcuda.so.1");
    std::filesystem::remove_all(dir_);
  }
  // Applies the environment, as the library reads it at load.
  void Reload() { ReloadForTesting(); }
  std::string Events() { return driver_.events(); }

  static std::string ReadFile(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  FakeDriver driver_;
  std::filesystem::path dir_;
};

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST_F(InstrumentEnv, WindowStartsAtBeginOfFirstAndStopsAtEndOfLast) {
  setenv("SIGHTLINE_PROFILE_START_STOP", "10-20,25-26", 1);
  Reload();
  for (int i = 0; i <= 30; ++i) {
    sightline_iteration_begin(i);
    if (i == 10) {
      EXPECT_EQ(Events(), "start;");
    }
    if (i == 10 || i == 20 || i == 25 || i == 26) {
      EXPECT_EQ(sightline_profiler_active(), 1) << i;
    }
    if (i == 9 || i == 21 || i == 24 || i == 27) {
      EXPECT_EQ(sightline_profiler_active(), 0) << i;
    }
    sightline_iteration_end(i);
    if (i == 19) {
      EXPECT_EQ(Events(), "start;");
    }
    if (i == 20) {
      EXPECT_EQ(Events(), "start;stop;");
    }
  }
  EXPECT_EQ(Events(), "start;stop;start;stop;");
  EXPECT_EQ(sightline_profiler_active(), 0);
}

TEST_F(InstrumentEnv, WindowOpensWhenTheLoopStartsInsideARange) {
  setenv("SIGHTLINE_PROFILE_START_STOP", "10-20", 1);
  Reload();
  for (int i = 15; i <= 22; ++i) {
    sightline_step(i);  // Step ends the previous iteration
  }
  sightline_iteration_end(22);
  EXPECT_EQ(Events(), "start;stop;");
}

TEST_F(InstrumentEnv, OnlySelectedRanksOpenTheWindow) {
  setenv("SIGHTLINE_PROFILE_START_STOP", "1-2", 1);
  setenv("SIGHTLINE_PROFILE_RANKS", "0,3", 1);
  for (const char* rank : {"3", "2"}) {
    setenv("OMPI_COMM_WORLD_RANK", rank, 1);
    driver_.reset(1);
    Reload();
    EXPECT_EQ(sightline_rank(), std::atoi(rank));
    for (int i = 0; i < 4; ++i) {
      sightline_iteration_begin(i);
      sightline_iteration_end(i);
    }
    EXPECT_EQ(Events(), std::string(rank) == "3" ? "start;stop;" : "") << "rank " << rank;
  }
  // No launcher variable: the process counts as rank 0, which the list selects.
  unsetenv("OMPI_COMM_WORLD_RANK");
  driver_.reset(1);
  Reload();
  EXPECT_EQ(sightline_rank(), -1);
  sightline_iteration_begin(1);
  sightline_iteration_end(1);
  sightline_iteration_begin(2);
  sightline_iteration_end(2);
  EXPECT_EQ(Events(), "start;stop;");
}

TEST_F(InstrumentEnv, BadSpecsReportOnceAndLeaveTheWindowOff) {
  for (const char* spec : {"10-", "20-10", "x", "1-5,3-8", ""}) {
    setenv("SIGHTLINE_PROFILE_START_STOP", spec, 1);
    driver_.reset(1);
    testing::internal::CaptureStderr();
    Reload();
    for (int i = 0; i < 30; ++i) {
      sightline_iteration_begin(i);
      sightline_iteration_end(i);
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(Count(err, "\n"), 1) << spec << ": " << err;
    EXPECT_EQ(Count(err, "SIGHTLINE_PROFILE_START_STOP=\"" + std::string(spec) + "\""), 1) << err;
    EXPECT_NE(err.find("the profiling window is off"), std::string::npos) << err;
    EXPECT_EQ(Events(), "") << spec;
  }
  setenv("SIGHTLINE_PROFILE_START_STOP", "1-2", 1);
  setenv("SIGHTLINE_PROFILE_RANKS", "zero", 1);
  testing::internal::CaptureStderr();
  Reload();
  sightline_iteration_begin(1);
  sightline_iteration_end(1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(err, "SIGHTLINE_PROFILE_RANKS=\"zero\""), 1) << err;
  EXPECT_EQ(Events(), "");
}

TEST_F(InstrumentEnv, NoDriverReportsOnceAndContinues) {
  SetDriverLibraryForTesting("libsightline-no-such-cuda-driver.so.1");
  setenv("SIGHTLINE_PROFILE_START_STOP", "0-3,5-8", 1);
  setenv("SIGHTLINE_ITERATION_LOG", (dir_ / "nodriver.jsonl").c_str(), 1);
  testing::internal::CaptureStderr();
  Reload();
  for (int i = 0; i < 12; ++i) {
    sightline_iteration_begin(i);
    EXPECT_EQ(sightline_profiler_active(), 0);
    sightline_iteration_end(i);
  }
  sightline_flush();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(err, "cannot load the CUDA driver"), 1) << err;
  EXPECT_EQ(Count(err, "\n"), 1) << err;
  const std::string log = ReadFile(dir_ / "nodriver.jsonl");
  EXPECT_EQ(Count(log, "\n"), 12);
  EXPECT_EQ(Count(log, "gpu_memory_bytes"), 0);  // unknown, so left out rather than 0
}

TEST_F(InstrumentEnv, RequestEventsAreJsonLinesWithTheOpenIteration) {
  sightline_request_event("r0", SIGHTLINE_REQUEST_ARRIVED, 0);  // no log configured: nothing
  setenv("SIGHTLINE_REQUEST_LOG", (dir_ / "req-%p.jsonl").c_str(), 1);
  Reload();
  sightline_request_event("r1", SIGHTLINE_REQUEST_ARRIVED, 0);  // outside an iteration
  sightline_iteration_begin(7);
  sightline_request_event("r1", SIGHTLINE_REQUEST_SCHEDULED, 0);
  sightline::RequestEvent("r1", SIGHTLINE_REQUEST_TOKENS, 3);
  sightline_iteration_end(7);
  std::thread other([] { sightline_request_event("r\"2", SIGHTLINE_REQUEST_FINISHED, 1); });
  other.join();
  sightline_request_event("r1", static_cast<sightline_request_event_kind>(99),
                          0);  // unknown: ignored
  sightline_flush();
  const std::string text = ReadFile(dir_ / ("req-" + std::to_string(getpid()) + ".jsonl"));
  ASSERT_EQ(Count(text, "\n"), 4) << text;
  simdjson::dom::parser parser;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto get = [&](size_t i, const char* key) -> std::string {
    simdjson::dom::object o = parser.parse(lines[i]).get_object().value();
    simdjson::dom::element e;
    if (o[key].get(e) != simdjson::SUCCESS) return "<absent>";
    if (e.is_string()) return std::string(e.get_string().value());
    if (e.is_bool()) return e.get_bool().value() ? "true" : "false";
    return std::to_string(e.get_int64().value());
  };
  EXPECT_EQ(get(0, "request"), "r1");
  EXPECT_EQ(get(0, "event"), "arrived");
  EXPECT_EQ(get(0, "iteration"), "<absent>");
  EXPECT_EQ(get(1, "event"), "scheduled");
  EXPECT_EQ(get(1, "iteration"), "7");
  EXPECT_EQ(get(2, "event"), "tokens");
  EXPECT_EQ(get(2, "tokens"), "3");
  EXPECT_EQ(get(3, "request"), "r\"2");
  EXPECT_EQ(get(3, "event"), "finished");
  EXPECT_EQ(get(3, "error"), "true");
  EXPECT_EQ(get(3, "iteration"), "<absent>");
  EXPECT_LE(std::stoll(get(0, "monotonic_ns")), std::stoll(get(3, "monotonic_ns")));
}

TEST_F(InstrumentEnv, LogLinesAreJsonWithTheFieldsSetAndNoOthers) {
  setenv("SIGHTLINE_ITERATION_LOG", (dir_ / "log-%p-%r.jsonl").c_str(), 1);
  setenv("RANK", "3", 1);
  setenv("SIGHTLINE_PROFILE_START_STOP", "1-1", 1);
  Reload();
  sightline_iteration_begin(0);
  sightline_log_field(SIGHTLINE_ACTIVE_REQUESTS, 5);
  sightline_log_field(SIGHTLINE_GENERATED_TOKENS, 0);  // zero is a value, so it is written
  sightline_log_int("n", 7);
  sightline_log_double("x", 0.25);
  sightline_log_string("phase", "de\"code\n");
  sightline_log_int("n", 8);  // the last value wins
  sightline_iteration_end(0);
  sightline_iteration_begin(1);
  sightline_iteration_end(1);
  driver_.reset(0);  // no current context: GPU memory is left out
  sightline_iteration_begin(2);
  sightline_log_field(SIGHTLINE_KV_BLOCKS_USED, 10);
  sightline_log_field(SIGHTLINE_KV_BLOCKS_MAX, 64);
  sightline_log_field(SIGHTLINE_CPU_MEMORY_BYTES, 123);  // the app's value replaces the RSS
  sightline_iteration_end(2);
  sightline_log_field(SIGHTLINE_ACTIVE_REQUESTS, 9);  // outside an iteration: ignored
  sightline_flush();

  const auto path = dir_ / ("log-" + std::to_string(getpid()) + "-3.jsonl");
  const std::string text = ReadFile(path);
  ASSERT_EQ(Count(text, "\n"), 3) << path << ":\n" << text;

  simdjson::dom::parser parser;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto keys = [&](size_t i) {
    simdjson::dom::object o = parser.parse(lines[i]).get_object().value();
    std::vector<std::string> out;
    for (auto field : o) out.emplace_back(field.key);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(keys(0),
            (V{"schema_version", "iteration", "rank", "pid", "timestamp_ns", "begin_monotonic_ns",
               "end_monotonic_ns", "latency_ns", "profiled", "active_requests", "generated_tokens",
               "gpu_memory_bytes", "cpu_memory_bytes", "user"}));
  EXPECT_EQ(keys(1), (V{"schema_version", "iteration", "rank", "pid", "timestamp_ns",
                        "begin_monotonic_ns", "end_monotonic_ns", "latency_ns", "profiled",
                        "gpu_memory_bytes", "cpu_memory_bytes"}));
  EXPECT_EQ(keys(2), (V{"schema_version", "iteration", "rank", "pid", "timestamp_ns",
                        "begin_monotonic_ns", "end_monotonic_ns", "latency_ns", "profiled",
                        "kv_blocks_used", "kv_blocks_max", "cpu_memory_bytes"}));

  simdjson::dom::element l0 = parser.parse(lines[0]).value();
  EXPECT_EQ(int64_t(l0["schema_version"]), 1);
  EXPECT_EQ(int64_t(l0["iteration"]), 0);
  EXPECT_EQ(int64_t(l0["rank"]), 3);
  EXPECT_EQ(int64_t(l0["pid"]), getpid());
  EXPECT_GT(int64_t(l0["timestamp_ns"]), 1'600'000'000'000'000'000);  // after 2020: realtime
  EXPECT_GE(int64_t(l0["latency_ns"]), 0);
  EXPECT_EQ(int64_t(l0["end_monotonic_ns"]) - int64_t(l0["begin_monotonic_ns"]),
            int64_t(l0["latency_ns"]));
  EXPECT_FALSE(bool(l0["profiled"]));
  EXPECT_EQ(int64_t(l0["active_requests"]), 5);
  EXPECT_EQ(int64_t(l0["generated_tokens"]), 0);
  EXPECT_EQ(int64_t(l0["gpu_memory_bytes"]), 4096);  // the fake driver: total 5096 - free 1000
  EXPECT_GT(int64_t(l0["cpu_memory_bytes"]), 0);
  EXPECT_EQ(int64_t(l0["user"]["n"]), 8);
  EXPECT_EQ(double(l0["user"]["x"]), 0.25);
  EXPECT_EQ(std::string_view(l0["user"]["phase"]), "de\"code\n");

  simdjson::dom::element l1 = parser.parse(lines[1]).value();
  EXPECT_TRUE(bool(l1["profiled"]));
  simdjson::dom::element l2 = parser.parse(lines[2]).value();
  EXPECT_EQ(int64_t(l2["iteration"]), 2);
  EXPECT_EQ(int64_t(l2["kv_blocks_used"]), 10);
  EXPECT_EQ(int64_t(l2["cpu_memory_bytes"]), 123);
  EXPECT_FALSE(bool(l2["profiled"]));
}

TEST_F(InstrumentEnv, UnwritableLogReportsOnceAndIsOff) {
  setenv("SIGHTLINE_ITERATION_LOG", "/nonexistent-dir/sub/log.jsonl", 1);
  testing::internal::CaptureStderr();
  Reload();
  for (int i = 0; i < 3; ++i) {
    sightline_iteration_begin(i);
    sightline_iteration_end(i);
  }
  sightline_flush();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Count(err, "cannot open the iteration log '/nonexistent-dir/sub/log.jsonl'"), 1) << err;
  EXPECT_EQ(Count(err, "\n"), 1) << err;
}

TEST_F(InstrumentEnv, BadNvtxLevelFallsBackToBasic) {
  setenv("SIGHTLINE_NVTX_LEVEL", "9", 1);
  testing::internal::CaptureStderr();
  Reload();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(sightline_nvtx_level(), 1);
  EXPECT_EQ(Count(err, "SIGHTLINE_NVTX_LEVEL=\"9\""), 1) << err;
}

}  // namespace
}  // namespace sightline::instrument
