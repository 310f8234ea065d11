// Tests for the iteration-log reader (analyses/iteration_log.h), its join to a trace's iterations
// (analyses/iteration_log/iteration_log_join.h) and `sightline analyze --iteration-log`.
#include "importers/iteration_log/iteration_log.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analyses/iteration_log/iteration_log_join.h"
#include "facts/iterations.h"
#include "testing/cli_runner.h"
#include "testing/context.h"
#include "testing/status.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::Ctx;

using testing::TraceFixture;

std::string Line(int64_t iteration, int64_t pid, const std::string& extra = "") {
  return "{\"schema_version\":1,\"iteration\":" + std::to_string(iteration) +
         ",\"pid\":" + std::to_string(pid) + extra + "}\n";
}

IterationLog Parse(const std::string& text) {
  return testing::ValueOrDie(ParseIterationLog(text, "log.jsonl"));
}

TEST(IterationLogReader, ReadsMembersAndLeavesUnsetOnesEmpty) {
  const IterationLog log = Parse(
      "{\"schema_version\":1,\"iteration\":12,\"rank\":3,\"pid\":99,\"timestamp_ns\":"
      "1700000000000000000,"
      "\"begin_monotonic_ns\":500,\"end_monotonic_ns\":800,\"latency_ns\":300,\"profiled\":true,"
      "\"active_requests\":8,\"generated_tokens\":0,\"kv_blocks_used\":136,\"future_member\":[1],"
      "\"user\":{\"mode\":\"eager\",\"n\":7,\"x\":0.5,\"bad\":null}}\n"
      "\n" +
      Line(13, 99));
  ASSERT_EQ(log.entries.size(), 2u);
  const IterationLogEntry& e = log.entries[0];
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.iteration, 12);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.latency_ns, 300);
  EXPECT_EQ(e.profiled, std::optional<bool>(true));
  EXPECT_EQ(e.field(IterationLogField::kActiveRequests), std::optional<int64_t>(8));
  EXPECT_EQ(e.field(IterationLogField::kGeneratedTokens), std::optional<int64_t>(0));
  EXPECT_FALSE(e.field(IterationLogField::kContextRequests).has_value());
  ASSERT_EQ(e.user.size(), 4u);
  EXPECT_EQ(e.user[0].first, "mode");
  EXPECT_EQ(std::get<std::string>(e.user[0].second), "eager");
  EXPECT_EQ(std::get<int64_t>(e.user[1].second), 7);
  EXPECT_EQ(std::get<double>(e.user[2].second), 0.5);
  EXPECT_EQ(log.entries[1].line, 3);  // the blank line counts
  EXPECT_FALSE(log.entries[1].profiled.has_value());
  EXPECT_EQ(log.entries[1].rank, -1);
}

TEST(IterationLogReader, BadLinesNameTheLineAndTheProblem) {
  const struct {
    std::string text;
    std::string message;
  } cases[] = {
      {Line(0, 1) + "{\"schema_version\":1,\n", "log.jsonl:2: not valid JSON"},
      {Line(0, 1) + "[1,2]\n", "log.jsonl:2: not a JSON object"},
      {"{\"iteration\":1}\n", "log.jsonl:1: no \"schema_version\" member"},
      {"{\"schema_version\":2,\"iteration\":1}\n", "log.jsonl:1: schema_version 2 is not one"},
      {"{\"schema_version\":1}\n", "log.jsonl:1: no \"iteration\" member"},
      {Line(0, 1, ",\"active_requests\":\"8\""), "\"active_requests\" is not an integer"},
      {Line(0, 1, ",\"profiled\":1"), "\"profiled\" is not true or false"},
      {Line(0, 1, ",\"user\":{\"a\":[1]}"), "user field \"a\" is not a number or a string"},
      {"\n\n", "log.jsonl: no iteration lines"},
  };
  for (const auto& c : cases) {
    StatusOr<IterationLog> log = ParseIterationLog(c.text, "log.jsonl");
    ASSERT_FALSE(log.ok()) << c.text;
    EXPECT_EQ(log.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(log.status().message().find(c.message), std::string::npos) << log.status().message();
  }
  EXPECT_EQ(ReadIterationLog("/nonexistent/log.jsonl").status().code(), StatusCode::kNotFound);
}

TEST(IterationLogJoin, ByCounterInTheRangeNames) {
  Trace t = TraceFixture()
                .Range("iteration 5", 0, 100)
                .Launch("k", 10, 11, 20, 30)
                .Range("iteration 6", 100, 250)
                .Range("iteration 7", 250, 300)
                .Build();
  const IterationLog log =
      Parse(Line(5, 100, ",\"latency_ns\":90,\"generated_tokens\":8") +
            Line(7, 100, ",\"latency_ns\":40,\"generated_tokens\":8") + Line(9, 100));
  const auto context = Ctx(t);  // the join points into its iterations: keep it alive
  const IterationLogJoin join = JoinIterationLog(*context, log);
  EXPECT_EQ(join.method, IterationLogJoinMethod::kIterationCounter);
  EXPECT_EQ(join.log_entries, 3);
  EXPECT_EQ(join.unmatched_trace, 1);
  ASSERT_EQ(join.rows.size(), 2u);
  EXPECT_EQ(join.rows[0].entry->iteration, 5);
  EXPECT_EQ(join.rows[0].trace_index, 0);
  EXPECT_EQ(join.rows[1].entry->iteration, 7);
  EXPECT_EQ(join.rows[1].trace_index, 2);
  EXPECT_EQ(join.rows[1].end_ns - join.rows[1].start_ns, 50);
  EXPECT_NE(join.note.find("1 of the trace's 3 iterations have no log line"), std::string::npos)
      << join.note;

  Section s;
  AddIterationLogToSection(t, join, 10, s);
  ASSERT_EQ(s.tables.size(), 1u);
  const Table& table = s.tables[0];
  std::vector<std::string> keys;
  for (const Column& c : table.columns) keys.push_back(c.key);
  // Only the members some matched line has get a column.
  EXPECT_EQ(keys, (std::vector<std::string>{"iteration", "index", "start_ns", "wall_ns",
                                            "latency_ns", "generated_tokens"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(table.rows[1][3]), 50);  // trace wall of iteration 7
  EXPECT_EQ(std::get<int64_t>(table.rows[1][4]), 40);  // log latency
  const Fact* tps = nullptr;
  for (const Fact& f : s.facts) {
    if (f.key == "generated_tokens_per_s") tps = &f;
  }
  ASSERT_NE(tps, nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(tps->value), 16 * 1e9 / 130);
}

TEST(IterationLogJoin, OtherProcessesAreLeftOut) {
  Trace t = TraceFixture().Range("iteration 1", 0, 100).Range("iteration 2", 100, 200).Build();
  // Two processes in the log, neither the trace's (pid 100): nothing joins, and the note says why.
  IterationLogJoin join = JoinIterationLog(*Ctx(t), Parse(Line(1, 5) + Line(1, 6)));
  EXPECT_TRUE(join.rows.empty());
  EXPECT_NE(join.note.find("2 processes"), std::string::npos) << join.note;
  // One process, another pid (recorded elsewhere): all its lines are used.
  join = JoinIterationLog(*Ctx(t), Parse(Line(1, 5) + Line(2, 5)));
  EXPECT_EQ(join.rows.size(), 2u);
  // The trace's pid among several: only its lines.
  join = JoinIterationLog(*Ctx(t), Parse(Line(1, 5) + Line(2, 100) + Line(1, 100)));
  EXPECT_EQ(join.log_entries, 2);
  EXPECT_EQ(join.rows.size(), 2u);
}

TEST(IterationLogJoin, ByMonotonicTimestampWithoutIterationRanges) {
  Trace t = TraceFixture()
                .Launch("a", 1'000, 1'010, 1'100, 1'200)
                .Launch("b", 1'300, 1'310, 1'400, 1'500)
                .Launch("c", 2'100, 2'110, 2'200, 2'300)
                .Build();
  const IterationLog log =
      Parse(Line(0, 1,
                 ",\"timestamp_ns\":1700000000000000000,\"begin_monotonic_ns\":1000,"
                 "\"end_monotonic_ns\":2000,\"latency_ns\":1000") +
            Line(1, 1,
                 ",\"timestamp_ns\":1700000000000001000,\"begin_monotonic_ns\":2000,"
                 "\"end_monotonic_ns\":3000,\"latency_ns\":1000") +
            Line(2, 1,
                 ",\"timestamp_ns\":1700000000000002000,\"begin_monotonic_ns\":90000,"
                 "\"end_monotonic_ns\":91000,\"latency_ns\":1000"));
  const auto context = Ctx(t);  // the join points into its iterations: keep it alive
  const IterationLogJoin join = JoinIterationLog(*context, log);
  EXPECT_EQ(join.method, IterationLogJoinMethod::kMonotonic);
  ASSERT_EQ(join.rows.size(), 2u);  // iteration 2 lies outside the trace
  EXPECT_EQ(join.rows[0].kernels, 2);
  EXPECT_EQ(join.rows[1].kernels, 1);
  EXPECT_NE(join.note.find("2 of the log's 3 lines"), std::string::npos) << join.note;

  // A log on neither clock of the trace: no rows, and a note that says so.
  const IterationLogJoin none = JoinIterationLog(
      *Ctx(t), Parse(Line(0, 1, ",\"begin_monotonic_ns\":900000,\"end_monotonic_ns\":900100")));
  EXPECT_EQ(none.method, IterationLogJoinMethod::kNone);
  EXPECT_TRUE(none.rows.empty());
  EXPECT_NE(none.note.find("overlaps"), std::string::npos) << none.note;
}

// A PyTorch-profiler-shaped trace with three "iteration N" annotations and one kernel in each.
std::string KinetoTrace() {
  std::string events;
  for (int i = 0; i < 3; ++i) {
    const int ts = 1000 + i * 100;
    if (!events.empty()) events += ",\n";
    events += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"iteration " +
              std::to_string(i) + "\",\"pid\":77,\"tid\":77,\"ts\":" + std::to_string(ts) +
              ",\"dur\":90},\n";
    events +=
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":" +
        std::to_string(ts + 10) +
        ",\"dur\":20,\"args\":{\"device\":0,\"stream\":7,\"correlation\":" + std::to_string(i + 1) +
        "}}";
  }
  return "{\"schemaVersion\":1,\"traceEvents\":[\n" + events + "\n]}\n";
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(IterationLogCli, AnalyzeShowsTheLogInTheIterationsSection) {
  const std::string dir = testing::MakeTempDir();
  WriteFile(dir + "/trace.json", KinetoTrace());
  WriteFile(dir + "/log.jsonl", Line(0, 77, ",\"latency_ns\":90000,\"active_requests\":8") +
                                    Line(1, 77, ",\"latency_ns\":91000,\"active_requests\":9") +
                                    Line(2, 77, ",\"latency_ns\":92000,\"active_requests\":10"));
  testing::CliResult r = testing::RunSightline("analyze " + dir + "/trace.json --iteration-log " +
                                               dir + "/log.jsonl --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"iteration_log_matched\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"active_requests\""), std::string::npos);
  testing::CliResult text =
      testing::RunSightline("analyze " + dir + "/trace.json --iteration-log " + dir + "/log.jsonl");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Iteration log (per iteration)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("iteration counter"), std::string::npos) << text.out;
}

TEST(IterationLogCli, BadLogExitsTwoWithTheLine) {
  const std::string dir = testing::MakeTempDir();
  WriteFile(dir + "/trace.json", KinetoTrace());
  WriteFile(dir + "/bad.jsonl", Line(0, 77) + "{\"schema_version\":1,\"iteration\":\"one\"}\n");
  testing::CliResult r =
      testing::RunSightline("analyze " + dir + "/trace.json --iteration-log " + dir + "/bad.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.jsonl:2: \"iteration\" is not an integer"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = testing::RunSightline("analyze " + dir + "/trace.json --iteration-log " + dir +
                            "/none.jsonl");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.jsonl"), std::string::npos) << r.err;
}

// A log alone (issue 28: too little for the join, so the report shows what the log holds and
// names the trace as the missing piece): latencies, tokens/s, prefill against decode, counters.
TEST(IterationLogCli, ALogAloneShowsItsOwnFiguresAndAsksForTheTrace) {
  const std::string dir = testing::MakeTempDir();
  // Latencies 1, 2, 3 and 10 ms; 100 generated tokens per decode line; one line with context
  // work; one line without a latency.
  WriteFile(
      dir + "/log.jsonl",
      Line(5, 77, ",\"latency_ns\":10000000,\"context_requests\":2,\"generated_tokens\":0") +
          Line(6, 77, ",\"latency_ns\":1000000,\"context_requests\":0,\"generated_tokens\":100") +
          Line(7, 77, ",\"latency_ns\":2000000,\"context_requests\":0,\"generated_tokens\":100") +
          Line(8, 77, ",\"latency_ns\":3000000,\"context_requests\":0,\"generated_tokens\":100") +
          Line(9, 77, ",\"gpu_memory_bytes\":1048576"));
  testing::CliResult r = testing::RunSightline("analyze " + dir + "/log.jsonl --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto fact = [&](const std::string& key) {
    const std::string name = "\"" + key + "\": ";
    const size_t at = r.out.find(name);
    if (at == std::string::npos) return std::string("(absent)");
    const size_t v = at + name.size();
    return r.out.substr(v, r.out.find_first_of(",\n}", v) - v);
  };
  EXPECT_EQ(fact("iteration_log_lines"), "5") << r.out;
  EXPECT_EQ(fact("iterations_first"), "5");
  EXPECT_EQ(fact("iterations_last"), "9");
  EXPECT_EQ(fact("latency_median_ns"), "2500000");  // of 1, 2, 3, 10 ms
  EXPECT_EQ(fact("latency_max_ns"), "10000000");
  EXPECT_EQ(fact("lines_without_latency"), "1");
  // 300 tokens over 16 ms of the lines that state both.
  EXPECT_EQ(fact("generated_tokens_per_s"), "18750");
  EXPECT_EQ(fact("iterations_with_context"), "1");
  EXPECT_NE(r.out.find("\"iteration_log_memory\": {"), std::string::npos);
  EXPECT_NE(r.out.find("\"input\": 0"), std::string::npos);
  EXPECT_NE(r.out.find("its own figures (no trace to join it to)"), std::string::npos);
  EXPECT_NE(r.out.find("Give the trace of the same run too"), std::string::npos);
}

}  // namespace
}  // namespace sightline
