// The writer's whole-graph records with a capture range, without a GPU: GRAPH_TRACE stays enabled
// for the whole run then (enabling it at a window's start crashed programs, run27), so the writer
// keeps a graph record only when its replay starts inside a window.
#include <cupti.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shared/recorder_format.h"
#include "writer.h"

namespace sightline::recorder {
namespace {

namespace fs = std::filesystem;

// The graph ids of the file's graph records, in file order.
std::vector<uint64_t> GraphIds(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::vector<uint64_t> ids;
  recfmt::ReadSummary summary;
  const std::string error =
      recfmt::ReadRecords(s.str(), &summary, [&](recfmt::RecordType t, std::string_view b) {
        if (t == recfmt::RecordType::kGraph)
          ids.push_back(recfmt::DecodeBody<recfmt::GraphBody>(b).graph_id);
      });
  EXPECT_EQ(error, "");
  return ids;
}

// Replays starting at 50 (before every window), 150 (in the first), 250 (between the two) and 350
// (in the open second one); each replay's graph id is its start.
std::vector<uint64_t> Record(bool gate) {
  const fs::path file = fs::temp_directory_path() /
                        ("slrec_graphs_" + std::to_string(gate) + "." + std::to_string(::getpid()));
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0);
  Writer w(fd, 1 << 16, 8);
  w.GateGraphRecordsByWindow(gate);
  w.WindowOpened(100);
  w.WindowClosed(200);
  w.WindowOpened(300);
  for (uint64_t start : {50, 150, 250, 350}) {
    CUpti_ActivityGraphTrace2 g{};
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    g.start = start;
    g.end = start + 10;
    g.graphId = static_cast<uint32_t>(start);
    w.TranslateOne(&g);
  }
  w.Finish(2);
  std::vector<uint64_t> ids = GraphIds(file);
  fs::remove(file);
  return ids;
}

TEST(WriterGraphRecords, WithACaptureRangeOnlyReplaysStartingInAWindowAreKept) {
  EXPECT_EQ(Record(true), (std::vector<uint64_t>{150, 350}));
}

TEST(WriterGraphRecords, WithoutTheGateEveryReplayIsKept) {
  EXPECT_EQ(Record(false), (std::vector<uint64_t>{50, 150, 250, 350}));
}

}  // namespace
}  // namespace sightline::recorder
