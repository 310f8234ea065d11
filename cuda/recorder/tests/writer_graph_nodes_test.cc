// The writer's graph node records (issue 29), without a GPU: nodes added from several threads at
// once, as CUPTI's resource callbacks add them, all reach the file with the end record; the
// pending list is bounded, and what it could not hold is counted in the drops record.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shared/recorder_format.h"
#include "writer.h"

namespace sightline::recorder {
namespace {

namespace fs = std::filesystem;

struct Nodes {
  std::string error;
  std::set<uint64_t> ids;
  uint64_t records = 0, bad_bodies = 0;
  recfmt::DropsBody drops{};
  bool have_end = false;
};

Nodes ReadNodes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string bytes = s.str();
  Nodes n;
  recfmt::ReadSummary summary;
  n.error = recfmt::ReadRecords(bytes, &summary, [&](recfmt::RecordType t, std::string_view b) {
    if (t == recfmt::RecordType::kGraphNode) {
      const auto g = recfmt::DecodeBody<recfmt::GraphNodeBody>(b);
      if (b.size() != sizeof g || g.original_node_id != g.node_id + 1 || g.tid != 77) {
        ++n.bad_bodies;
      }
      n.ids.insert(g.node_id);
      ++n.records;
    }
    if (t == recfmt::RecordType::kDrops) n.drops = recfmt::DecodeBody<recfmt::DropsBody>(b);
    if (t == recfmt::RecordType::kEnd) n.have_end = true;
  });
  return n;
}

recfmt::GraphNodeBody Node(uint64_t id) {
  recfmt::GraphNodeBody b{};
  b.time_ns = static_cast<int64_t>(id);
  b.node_id = id;
  b.original_node_id = id + 1;
  b.pid = 1;
  b.tid = 77;
  b.event = static_cast<uint32_t>(recfmt::GraphNodeEvent::kCloned);
  return b;
}

fs::path TempFile(const std::string& name) {
  return fs::temp_directory_path() / (name + "." + std::to_string(::getpid()) + ".slrec");
}

TEST(WriterGraphNodes, NodesFromManyThreadsAllReachTheFile) {
  const fs::path file = TempFile("slrec_nodes");
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  Writer w(fd, 1 << 16, 8);
  w.Start();
  constexpr uint64_t kThreads = 4, kPerThread = 20'000;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&w, t] {
      for (uint64_t i = 0; i < kPerThread; ++i) w.AddGraphNode(Node(1 + 2 * (t * kPerThread + i)));
    });
  }
  for (std::thread& t : threads) t.join();
  w.AddGraphNodeDropped();  // CUPTI gave no id for one node
  w.Finish(0);
  const Nodes n = ReadNodes(file);
  EXPECT_EQ(n.error, "");
  EXPECT_TRUE(n.have_end);
  EXPECT_EQ(n.records, kThreads * kPerThread);
  EXPECT_EQ(n.ids.size(), kThreads * kPerThread);  // none twice, none lost
  EXPECT_EQ(n.bad_bodies, 0u);
  EXPECT_EQ(n.drops.graph_node_dropped_records, 1u);
  fs::remove(file);
}

// A writer whose thread never runs (nothing drains the list): past kMaxPendingGraphNodes the nodes
// are counted, not kept; Finish still writes the ones held.
TEST(WriterGraphNodes, PendingNodesAreBounded) {
  const fs::path file = TempFile("slrec_nodes_bound");
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  Writer w(fd, 1 << 16, 8);
  const uint64_t n_add = Writer::kMaxPendingGraphNodes + 5;
  for (uint64_t i = 0; i < n_add; ++i) w.AddGraphNode(Node(2 * i + 1));
  w.Finish(0);
  const Nodes n = ReadNodes(file);
  EXPECT_EQ(n.error, "");
  EXPECT_TRUE(n.have_end);
  EXPECT_EQ(n.records, Writer::kMaxPendingGraphNodes);
  EXPECT_EQ(n.drops.graph_node_dropped_records, 5u);
  fs::remove(file);
}

}  // namespace
}  // namespace sightline::recorder
