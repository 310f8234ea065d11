// The run's process tree beside a recording (`sightline record`'s NAME.processes.json): read onto
// the recording's clock when it names the recording, left alone when it names another, counted
// when it is damaged; impossible values are refused.
#include "importers/recorder/run_processes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "importers/importer.h"
#include "shared/recorder_format.h"
#include "testing/cli_runner.h"

namespace sightline {
namespace {

std::string Doc(int64_t start, const std::string& recording, const std::string& extra = "") {
  return R"({"sightline_processes": 1, "clock": "CLOCK_MONOTONIC", "start_ns": )" +
         std::to_string(start) + R"(, "end_ns": )" + std::to_string(start + 5000) +
         R"(, "processes": [
  {"pid": 40, "ppid": 1, "name": "python3", "command": "python3 serve.py", "start_ns": )" +
         std::to_string(start) + R"(, "end_ns": )" + std::to_string(start + 4000) +
         R"(, "cpu_user_ns": 300, "cpu_system_ns": 100, "max_threads": 3, "recording": ")" +
         recording + R"(", "threads": [[40, "python3", 400]],
   "cpu_samples": [[)" +
         std::to_string(start + 2000) + R"(, 150], [)" + std::to_string(start + 4000) + R"(, 250]]},
  {"pid": 41, "ppid": 40, "name": "detok", "command": "python3 -c x", "start_ns": )" +
         std::to_string(start + 1000) + R"(, "end_ns": null, "cpu_user_ns": 0,
   "cpu_system_ns": 0, "max_threads": 1, "recording": null, "threads": [], "cpu_samples": []})" +
         extra + "]}";
}

TEST(RunProcesses, ParsedOntoTheTraceClockByStart) {
  const auto procs = ParseRunProcesses(Doc(1'000'000, "/x/run.slrec"), 7);
  ASSERT_TRUE(procs.ok()) << procs.status().ToString();
  ASSERT_EQ(procs->size(), 2u);
  const RunProcess& root = (*procs)[0];
  EXPECT_EQ(root.pid, 40);
  EXPECT_EQ(root.start_ns, 1'000'007);
  EXPECT_EQ(root.end_ns, 1'004'007);
  EXPECT_TRUE(root.ended);
  EXPECT_EQ(root.cpu_ns, 400);
  EXPECT_EQ(root.recording, "/x/run.slrec");
  ASSERT_EQ(root.cpu_end_ns.size(), 2u);
  EXPECT_EQ(root.cpu_end_ns[1], 1'004'007);
  EXPECT_EQ(root.cpu_used_ns[1], 250);
  const RunProcess& detok = (*procs)[1];
  EXPECT_FALSE(detok.ended);  // alive when the program ended: lives to the run's end
  EXPECT_EQ(detok.end_ns, 1'005'007);
  EXPECT_EQ(detok.recording, "");
}

// A process that ends between two samples (or after the watcher's last) has its last CPU time
// only in its total: it becomes one more sample, ending at the process's end, so the samples add
// up to the total and the time it fell in is the one left. The run's start, end and root come out.
TEST(RunProcesses, CpuAfterTheLastSampleEndsAtTheProcesssEnd) {
  std::string doc = Doc(1'000'000, "/x/run.slrec");
  doc.replace(doc.find("\"cpu_user_ns\": 300"), 18, "\"cpu_user_ns\": 500");
  RunOfTrace run;
  const auto procs = ParseRunProcesses(doc, 7, &run);
  ASSERT_TRUE(procs.ok()) << procs.status().ToString();
  const RunProcess& root = (*procs)[0];
  EXPECT_EQ(root.cpu_ns, 600);
  // The last sample is at its end: the 200 ns the samples did not see are the last sample's.
  ASSERT_EQ(root.cpu_end_ns.size(), 2u);
  EXPECT_EQ(root.cpu_used_ns[1], 450);
  // Moved before its end: the 200 ns the samples did not see fall between them and its end.
  doc.replace(doc.find("[1004000, 250]"), 14, "[1003000, 250]");
  const auto moved = ParseRunProcesses(doc, 7, &run);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  const RunProcess& r = (*moved)[0];
  ASSERT_EQ(r.cpu_end_ns.size(), 3u);
  EXPECT_EQ(r.cpu_end_ns[2], 1'004'007);
  EXPECT_EQ(r.cpu_used_ns[2], 200);
  EXPECT_EQ(run.start_monotonic_ns, 1'000'000);
  EXPECT_EQ(run.end_monotonic_ns, 1'005'000);
  EXPECT_EQ(run.root_pid, 40);
}

TEST(RunProcesses, ImpossibleValuesAreRefused) {
  const std::string good = Doc(10'000'000'000, "r.slrec");
  auto refused = [](const std::string& text) { return !ParseRunProcesses(text, 0).ok(); };
  EXPECT_FALSE(refused(good));
  std::string v2 = good;
  v2.replace(v2.find("\"sightline_processes\": 1"), 24, "\"sightline_processes\": 2");
  EXPECT_TRUE(refused(v2));
  EXPECT_TRUE(refused("[1, 2]"));
  EXPECT_TRUE(refused("{\"sightline_processes\": 1"));
  // A process that starts long before the run, a negative CPU time, a pid beyond Linux's.
  EXPECT_TRUE(refused(Doc(10'000'000'000, "r.slrec",
                          R"(, {"pid": 5, "ppid": 40, "name": "a", "command": "", "start_ns": 5,
                           "end_ns": null, "cpu_user_ns": 0, "cpu_system_ns": 0,
                           "max_threads": 1, "recording": null})")));
  std::string negative = good;
  negative.replace(negative.find("\"cpu_user_ns\": 300"), 18, "\"cpu_user_ns\": -30");
  EXPECT_TRUE(refused(negative));
  std::string big_pid = good;
  big_pid.replace(big_pid.find("\"pid\": 41"), 9, "\"pid\": 99999999");
  EXPECT_TRUE(refused(big_pid));
  // CPU samples going back in time.
  std::string back = good;
  back.replace(back.find("[10000004000, 250]"), 18, "[10000001000, 250]");
  EXPECT_TRUE(refused(back));
}

// The process record of the shipped recording: its CUPTI and monotonic start.
recfmt::ProcessBody ProcessOf(const std::string& bytes) {
  recfmt::ProcessBody p{};
  recfmt::ReadSummary summary;
  recfmt::ReadRecords(bytes, &summary, [&](recfmt::RecordType type, std::string_view body) {
    if (type == recfmt::RecordType::kProcess) p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
  });
  return p;
}

TEST(RunProcesses, ImporterAddsTheTreeThatNamesTheRecording) {
  const std::string dir = testing::MakeTempDir();
  std::ifstream in(
      std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/recorder/recorder_test_app_h100.slrec",
      std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const recfmt::ProcessBody p = ProcessOf(bytes.str());
  ASSERT_GT(p.start_monotonic_ns, 0);
  std::ofstream(dir + "/run.4242.slrec", std::ios::binary) << bytes.str();
  // Another run's tree and this run's, moved here from the folder they were written in.
  std::ofstream(dir + "/other.processes.json") << Doc(p.start_monotonic_ns, "/tmp/other.slrec");
  std::ofstream(dir + "/run.processes.json") << Doc(p.start_monotonic_ns, "/tmp/w/run.4242.slrec");
  StatusOr<Trace> t = ImportTrace(dir + "/run.4242.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->run_processes.size(), 2u);
  EXPECT_EQ(t->run_processes[0].start_ns, p.start_cupti_ns);
  EXPECT_EQ(t->run_processes[1].name, "detok");

  // A damaged tree that names the recording: a warning, and the recording stands alone.
  std::filesystem::remove(dir + "/run.processes.json");
  std::ofstream(dir + "/run.processes.json") << "{\"sightline_processes\": 1, \"run.4242.slrec\"";
  t = ImportTrace(dir + "/run.4242.slrec");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->run_processes.empty());
  EXPECT_EQ(t->diagnostics.Count(DiagCode::kRecorderRunProcessesUnreadable), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sightline
