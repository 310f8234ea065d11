// Tests for TensorRT-LLM's iteration statistics as --iteration-log
// (analyses/trtllm_iteration_log.h): the three shapes recognised from content, their fields, other
// log lines skipped and counted, and the join to a trace's iterations with the
// prefill-against-decode comparison.
#include "importers/iteration_log/trtllm_iteration_log.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "analyses/iteration_log/iteration_log_join.h"
#include "base/file_io.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/files.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;
using testing::TraceFixture;

IterationLog Parse(const std::string& text) {
  return testing::ValueOrDie(ParseIterationLog(text, "log.txt"));
}

int64_t FieldOf(const IterationLogEntry& e, IterationLogField f) { return e.field(f).value_or(-1); }

// Iterations 10..13 of an NVTX loop as TensorRT-LLM's PyTorch executor names them; 10 and 12 run
// prefill work: longer, with more kernels.
Trace ExecutorTrace() {
  TraceFixture f;
  TimeNs t = 0;
  for (int i = 10; i < 14; ++i) {
    const bool prefill = i % 2 == 0;
    const TimeNs wall = prefill ? 3'000 : 1'000;
    f.Range("[Executor] _forward_step " + std::to_string(i) + ": 1 ctx reqs", t, t + wall);
    const int kernels = prefill ? 4 : 2;
    for (int k = 0; k < kernels; ++k)
      f.Launch("gemm", t + 10 * k, t + 10 * k + 5, t + 100 * k + 50, t + 100 * k + 90);
    t += wall;
  }
  return f.Build();
}

TEST(TrtllmIterationLog, IterationStatsArrayFromTrtllmServeMetrics) {
  const IterationLog log = Parse(R"([
    {"iter": 10, "iterLatencyMS": 3.5, "numActiveRequests": 4, "gpuMemUsage": 1000,
     "inflightBatchingStats": {"numContextRequests": 1, "numGenRequests": 3, "numCtxTokens": 512},
     "kvCacheStats": {"usedNumBlocks": 7, "freeNumBlocks": 93, "maxNumBlocks": 100, "tokensPerBlock": 32}},
    {"iter": 11, "iterLatencyMS": 1.25, "numActiveRequests": 4,
     "inflightBatchingStats": {"numContextRequests": 0, "numGenRequests": 4}}])");
  EXPECT_EQ(log.format, "trtllm-iteration-stats");
  ASSERT_EQ(log.entries.size(), 2u);
  const IterationLogEntry& e = log.entries[0];
  EXPECT_EQ(e.iteration, 10);
  EXPECT_EQ(e.latency_ns, 3'500'000);
  EXPECT_EQ(FieldOf(e, IterationLogField::kActiveRequests), 4);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextRequests), 1);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGenerationRequests), 3);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextTokens), 512);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvBlocksUsed), 7);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvBlocksMax), 100);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvTokensPerBlock), 32);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGpuMemoryBytes), 1000);
  EXPECT_EQ(FieldOf(log.entries[1], IterationLogField::kContextRequests), 0);
}

TEST(TrtllmIterationLog, IterationStatsJsonLines) {
  const IterationLog log = Parse(
      "{\"iter\": 3, \"iterLatencyMS\": 2.0, \"numActiveRequests\": 1}\n"
      "{\"iter\": 4, \"iterLatencyMS\": 2.5, \"numActiveRequests\": 2}\n");
  EXPECT_EQ(log.format, "trtllm-iteration-stats");
  ASSERT_EQ(log.entries.size(), 2u);
  EXPECT_EQ(log.entries[1].iteration, 4);
  EXPECT_EQ(log.entries[1].latency_ns, 2'500'000);
}

TEST(TrtllmIterationLog, CppRuntimeLogLinesAmongOtherLines) {
  const IterationLog log = Parse(
      "[TensorRT-LLM][INFO] Engine version 0.9 found\n"
      "[TensorRT-LLM][INFO] {\"Active Request Count\":249,\"Context Requests\":8,\"Free KV cache "
      "blocks\":0,\"Generation Requests\":231,\"Iteration Counter\":90,\"Max KV cache "
      "blocks\":2448,\"Max Request Count\":256,\"MicroBatch ID\":0,\"Runtime CPU Memory "
      "Usage\":28784,\"Runtime GPU Memory Usage\":540173600,\"Runtime Pinned Memory "
      "Usage\":0,\"Scheduled Requests\":239,\"Timestamp\":\"12-13-2023 14:55:14\",\"Tokens per KV "
      "cache block\":128,\"Total Context Tokens\":6904,\"Used KV cache blocks\":2448}\n"
      "[TensorRT-LLM][WARNING] something else\n");
  EXPECT_EQ(log.format, "trtllm-cpp-log");
  EXPECT_EQ(log.skipped_lines, 2);
  ASSERT_EQ(log.entries.size(), 1u);
  const IterationLogEntry& e = log.entries[0];
  EXPECT_EQ(e.iteration, 90);
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(FieldOf(e, IterationLogField::kActiveRequests), 249);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextRequests), 8);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGenerationRequests), 231);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextTokens), 6904);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvBlocksUsed), 2448);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvBlocksFree), 0);
  EXPECT_EQ(FieldOf(e, IterationLogField::kKvTokensPerBlock), 128);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGpuMemoryBytes), 540173600);
}

TEST(TrtllmIterationLog, PyExecutorLogLines) {
  const IterationLog log = Parse(
      "INFO: server started\n"
      "[TRT-LLM] [I] [_torch][RANK 0] iter = 154, global_rank = 0, rank = 0, "
      "num_scheduled_requests = 32, kv_cache_util = 0.1, currank_total_requests = 0/1, "
      "host_step_time = 7.4ms, prev_device_step_time = 7.0ms, timestamp = 08-23-2026 01:02:03, "
      "states = {'num_ctx_requests': 2, 'num_ctx_tokens': 900, 'num_generation_tokens': 30}\n"
      "[TRT-LLM] [I] [_torch][RANK 0] iter = 155, global_rank = 0, rank = 0, "
      "host_step_time = 6.5ms, prev_device_step_time = None, "
      "states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 32}\n");
  EXPECT_EQ(log.format, "trtllm-py-executor-log");
  EXPECT_EQ(log.skipped_lines, 1);
  ASSERT_EQ(log.entries.size(), 2u);
  const IterationLogEntry& e = log.entries[0];
  EXPECT_EQ(e.iteration, 154);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.latency_ns, 7'400'000);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextRequests), 2);
  EXPECT_EQ(FieldOf(e, IterationLogField::kContextTokens), 900);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGeneratedTokens), 30);
  bool device = false;
  for (const auto& [key, value] : e.user) device |= key == "prev_device_step_time_ms";
  EXPECT_TRUE(device);
  for (const auto& [key, value] : log.entries[1].user) {
    EXPECT_NE(key, "prev_device_step_time_ms");  // "None": not recorded
  }
}

// Older py_executor lines (about v0.19, TensorRT-LLM pull request 3914; the two lines of
// ../shared/traces/realworld/trtllm_iterlog): the step time as "elapsed_time = 0.00506...s" and
// "num_scheduled_requests: 10" with a colon. Both were dropped.
TEST(TrtllmIterationLog, OlderPyExecutorElapsedTimeAndColonFields) {
  const IterationLog log = Parse(
      "[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, "
      "currank_total_requests = 0/0, elapsed_time = 0.005060911178588867s, timestamp = "
      "2025-04-28 09:56:44, num_scheduled_requests: 10, states = {'num_ctx_requests': 0, "
      "'num_ctx_tokens': 0, 'num_generation_tokens': 16}\n");
  EXPECT_EQ(log.format, "trtllm-py-executor-log");
  ASSERT_EQ(log.entries.size(), 1u);
  const IterationLogEntry& e = log.entries[0];
  EXPECT_EQ(e.iteration, 198);
  EXPECT_EQ(e.latency_ns, 5'060'911);
  EXPECT_EQ(FieldOf(e, IterationLogField::kGeneratedTokens), 16);
  std::map<std::string, double> user;
  for (const auto& [key, value] : e.user) {
    if (const double* d = std::get_if<double>(&value)) user[key] = *d;
    if (const int64_t* i = std::get_if<int64_t>(&value)) user[key] = static_cast<double>(*i);
  }
  EXPECT_EQ(user["num_scheduled_requests"], 10);
  EXPECT_NEAR(user["elapsed_time_ms"], 5.060911, 1e-6);

  const std::string dir = testing::SharedTracesDir();
  if (dir.empty()) GTEST_SKIP() << "../shared/traces is absent";
  const std::string path =
      dir + "/realworld/trtllm_iterlog/trtllm_pr3914_pyexecutor_elapsed_time.log";
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) GTEST_SKIP() << path << " absent";
  const IterationLog real = Parse(*text);
  ASSERT_EQ(real.entries.size(), 2u);
  for (const IterationLogEntry& r : real.entries) EXPECT_EQ(r.latency_ns, 5'060'911);
}

TEST(TrtllmIterationLog, OurOwnLogAndBadInputStayAsBefore) {
  EXPECT_FALSE(
      ParseTrtllmIterationLog("{\"schema_version\":1,\"iteration\":3,\"timestamp_ns\":1}\n", "x")
          .has_value());
  EXPECT_FALSE(ParseTrtllmIterationLog("hello\nworld\n", "x").has_value());
  std::optional<StatusOr<IterationLog>> bad = ParseTrtllmIterationLog("[1, 2]", "x.json");
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());
  EXPECT_NE(bad->status().message().find("element 1"), std::string::npos);
  StatusOr<IterationLog> none = ParseIterationLog("hello\n", "x.log");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("TensorRT-LLM"), std::string::npos);
}

TEST(TrtllmIterationLog, JoinsByCounterAndComparesPrefillWithDecode) {
  const Trace t = ExecutorTrace();
  std::string text;
  for (int i = 10; i < 14; ++i) {
    text += "[TRT-LLM] [I] [_torch][RANK 0] iter = " + std::to_string(i) +
            ", global_rank = 0, rank = 0, host_step_time = 1.0ms, states = {'num_ctx_requests': " +
            std::to_string(i % 2 == 0 ? 1 : 0) + ", 'num_ctx_tokens': 0}\n";
  }
  const IterationLog log = Parse(text);
  const auto context = Ctx(t);  // the join points into its iterations: keep it alive
  const IterationLogJoin join = JoinIterationLog(*context, log);
  EXPECT_EQ(join.method, IterationLogJoinMethod::kIterationCounter);
  ASSERT_EQ(join.rows.size(), 4u);
  Section s;
  AddIterationLogToSection(t, join, 10, s);
  const Fact* with_ctx = nullptr;
  for (const Fact& f : s.facts) {
    if (f.key == "iterations_with_context") with_ctx = &f;
  }
  ASSERT_NE(with_ctx, nullptr);
  EXPECT_EQ(std::get<int64_t>(with_ctx->value), 2);
  const Table* cmp = nullptr;
  for (const Table& table : s.tables) {
    if (table.key == "prefill_vs_decode") cmp = &table;
  }
  ASSERT_NE(cmp, nullptr);
  ASSERT_EQ(cmp->rows.size(), 2u);
  EXPECT_EQ(std::get<std::string>(cmp->rows[0][0]), "with context");
  EXPECT_EQ(std::get<int64_t>(cmp->rows[0][1]), 2);
  EXPECT_DOUBLE_EQ(std::get<double>(cmp->rows[0][2]), 3'000);  // wall median
  EXPECT_DOUBLE_EQ(std::get<double>(cmp->rows[1][2]), 1'000);
  EXPECT_DOUBLE_EQ(std::get<double>(cmp->rows[0][5]), 4);  // kernels
  EXPECT_DOUBLE_EQ(std::get<double>(cmp->rows[1][5]), 2);
}

}  // namespace
}  // namespace sightline
