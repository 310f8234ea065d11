// The Perfetto export of CUDA graph kernels (docs/formats/perfetto.md, "CUDA graph kernels"), on
// the graph-decode case recorded on an H100 (examples/graph_decode/): 8 layers, NVTX ranges
// layer_i > attention / mlp and head around the code, captured once inside "capture" and replayed
// 12 times. Per replay the program captures 18 attention, 15 mlp and 13 head kernels and 2 in
// "capture" alone (279 in all). The export is parsed back (simdjson) and checked against those
// numbers and against the kernel events it holds.
#include "exporters/perfetto_graph_ranges.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "exporters/perfetto_json.h"
#include "importers/importer.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

const std::string kGraphTrace =
    std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/graph_decode_node_h100.sqlite.gz";
constexpr int kReplays = 12, kLayers = 8;
constexpr int64_t kAttention = 18, kMlp = 15, kHead = 13, kCaptureOnly = 2;
constexpr int64_t kPerReplay = kLayers * (kAttention + kMlp) + kHead + kCaptureOnly;  // 279
constexpr double kEpsUs = 0.0005;  // timestamps are exact to the ns (3 decimals of µs)

struct KernelEvent {
  int64_t pid = 0, tid = 0;
  double ts = 0, dur = 0;
  bool graph = false;  // has graph_node
  std::string attributed_by, ranges;
  bool has_ranges = false;
};
struct RangeSlice {
  int64_t pid = 0, tid = 0;
  double ts = 0, dur = 0;
  std::string name, path, attributed_by;
  int64_t kernels = 0;
  bool clipped = false;
};
struct Export {
  std::vector<KernelEvent> kernels;
  std::vector<RangeSlice> slices;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  bool ok = false;
};

Export Parse(const std::string& json) {
  Export out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(json).get(doc) != simdjson::SUCCESS) return out;
  simdjson::dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element e : events) {
    std::string_view ph, cat, name;
    if (e["ph"].get_string().get(ph) != simdjson::SUCCESS) return out;
    if (e["cat"].get_string().get(cat) != simdjson::SUCCESS) cat = "";
    if (e["name"].get_string().get(name) != simdjson::SUCCESS) name = "";
    int64_t pid = 0, tid = 0;
    if (e["pid"].get_int64().get(pid) != simdjson::SUCCESS ||
        e["tid"].get_int64().get(tid) != simdjson::SUCCESS)
      return out;
    if (ph == "M" && name == "thread_name") {
      std::string_view n;
      if (e["args"]["name"].get_string().get(n) != simdjson::SUCCESS) return out;
      out.thread_names[{pid, tid}] = std::string(n);
      continue;
    }
    if (ph != "X" || (cat != "kernel" && cat != "graph_range")) continue;
    double ts = 0, dur = 0;
    if (e["ts"].get_double().get(ts) != simdjson::SUCCESS ||
        e["dur"].get_double().get(dur) != simdjson::SUCCESS)
      return out;
    simdjson::dom::element args = e["args"];
    std::string_view by, text;
    if (cat == "kernel") {
      KernelEvent& k = out.kernels.emplace_back();
      k.pid = pid;
      k.tid = tid;
      k.ts = ts;
      k.dur = dur;
      k.graph = args["graph_node"].is_int64();
      if (args["attributed_by"].get_string().get(by) == simdjson::SUCCESS) k.attributed_by = by;
      if (args["capture_ranges"].get_string().get(text) == simdjson::SUCCESS) {
        k.ranges = text;
        k.has_ranges = true;
      }
    } else {
      RangeSlice& s = out.slices.emplace_back();
      s.pid = pid;
      s.tid = tid;
      s.ts = ts;
      s.dur = dur;
      s.name = name;
      if (args["path"].get_string().get(text) != simdjson::SUCCESS) return out;
      s.path = text;
      if (args["attributed_by"].get_string().get(by) != simdjson::SUCCESS) return out;
      s.attributed_by = by;
      if (args["kernels"].get_int64().get(s.kernels) != simdjson::SUCCESS) return out;
      bool clipped = false;
      if (args["clipped"].get_bool().get(clipped) == simdjson::SUCCESS) s.clipped = clipped;
    }
  }
  out.ok = true;
  return out;
}

// The stream S of a "Stream S: graph ranges" track; -1 when the track is not named so.
int64_t StreamOf(const Export& ex, const RangeSlice& s) {
  auto it = ex.thread_names.find({s.pid, s.tid});
  if (it == ex.thread_names.end()) return -1;
  const std::string& n = it->second;
  const std::string suffix = ": graph ranges";
  if (!n.starts_with("Stream ") || !n.ends_with(suffix)) return -1;
  return std::stoll(n.substr(7, n.size() - 7 - suffix.size()));
}

// Slices on one track nest: sorted by start (longer first, then outer first), each ends within
// the one around it and continues its path.
void ExpectNested(const Export& ex) {
  std::map<std::pair<int64_t, int64_t>, std::vector<const RangeSlice*>> by_track;
  for (const RangeSlice& s : ex.slices) by_track[{s.pid, s.tid}].push_back(&s);
  for (auto& [track, slices] : by_track) {
    std::sort(slices.begin(), slices.end(), [](const RangeSlice* a, const RangeSlice* b) {
      if (a->ts != b->ts) return a->ts < b->ts;
      if (a->dur != b->dur) return a->dur > b->dur;
      return a->path.size() < b->path.size();  // same span: the outer one first
    });
    std::vector<const RangeSlice*> stack;
    for (const RangeSlice* s : slices) {
      while (!stack.empty() && stack.back()->ts + stack.back()->dur <= s->ts + kEpsUs)
        stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(s->ts + s->dur, stack.back()->ts + stack.back()->dur + kEpsUs)
            << s->path << " overlaps " << stack.back()->path;
        EXPECT_TRUE(s->path.starts_with(stack.back()->path + " > "))
            << s->path << " inside " << stack.back()->path;
      }
      stack.push_back(s);
    }
  }
}

// Each slice spans its kernels: the kernel events on its stream whose ranges start with its path
// and that start inside it are as many as it says, and the first starts at its start, the last
// ends at its end.
void ExpectSlicesCoverTheirKernels(const Export& ex) {
  for (const RangeSlice& s : ex.slices) {
    const int64_t stream = StreamOf(ex, s);
    ASSERT_GE(stream, 0) << s.path;
    int64_t n = 0;
    double first = 1e300, last_end = -1e300;
    for (const KernelEvent& k : ex.kernels) {
      if (k.pid != s.pid || k.tid != stream || !k.has_ranges) continue;
      if (k.ranges != s.path && !k.ranges.starts_with(s.path + " > ")) continue;
      if (k.ts < s.ts - kEpsUs || k.ts > s.ts + s.dur + kEpsUs) continue;
      if (k.ts >= s.ts + s.dur - kEpsUs && k.dur > 0 && s.dur > 0) continue;  // the next one's
      ++n;
      first = std::min(first, k.ts);
      last_end = std::max(last_end, k.ts + k.dur);
    }
    EXPECT_EQ(n, s.kernels) << s.path << " at " << s.ts;
    EXPECT_NEAR(first, s.ts, kEpsUs) << s.path;
    EXPECT_NEAR(last_end, s.ts + s.dur, kEpsUs) << s.path;
  }
}

// Expected kernels per path (all replays) and slices per path, with `outer` before every path
// ("capture > " when attributed by capture, "" when aligned with the eager step).
void ExpectGraphDecodeLayout(const Export& ex, const std::string& by, const std::string& outer) {
  std::map<std::string, int64_t> kernels_by_path;
  int64_t graph = 0, attributed = 0, without_ranges = 0;
  for (const KernelEvent& k : ex.kernels) {
    if (!k.graph) continue;
    ++graph;
    attributed += k.attributed_by == by;
    if (k.has_ranges) {
      ++kernels_by_path[k.ranges];
    } else {
      ++without_ranges;
    }
  }
  EXPECT_EQ(graph, kReplays * kPerReplay);
  EXPECT_EQ(attributed, graph);  // every graph kernel says how it was attributed
  std::map<std::string, int64_t> want;
  for (int i = 0; i < kLayers; ++i) {
    want[fmt::format("{}layer_{} > attention", outer, i)] = kReplays * kAttention;
    want[fmt::format("{}layer_{} > mlp", outer, i)] = kReplays * kMlp;
  }
  want[outer + "head"] = kReplays * kHead;
  if (!outer.empty()) {
    want["capture"] = kReplays * kCaptureOnly;  // captured outside every inner range
  } else {
    EXPECT_EQ(without_ranges, kReplays * kCaptureOnly);  // held only by the eager step's range
  }
  EXPECT_EQ(kernels_by_path, want);

  // The slices: per replay one per layer, one per layer's attention and mlp, one head (the
  // inner 8 x 2 + 1), and with capture one "capture" around the replay.
  std::map<std::string, int64_t> slices_by_path, kernels_per_slice;
  std::map<std::string, int64_t> leaves_by_name;
  for (const RangeSlice& s : ex.slices) {
    ++slices_by_path[s.path];
    EXPECT_EQ(s.attributed_by, by);
    EXPECT_FALSE(s.clipped) << s.path;  // graph kernels of one stream run one after another
    EXPECT_TRUE(s.path == s.name || s.path.ends_with(" > " + s.name)) << s.path;
    if (kernels_per_slice.count(s.path) > 0) {
      EXPECT_EQ(kernels_per_slice[s.path], s.kernels) << s.path;
    }
    kernels_per_slice[s.path] = s.kernels;
    if (s.name == "attention" || s.name == "mlp" || s.name == "head") ++leaves_by_name[s.name];
  }
  EXPECT_EQ(leaves_by_name["attention"], kReplays * kLayers);
  EXPECT_EQ(leaves_by_name["mlp"], kReplays * kLayers);
  EXPECT_EQ(leaves_by_name["head"], kReplays);
  std::map<std::string, int64_t> want_slices, want_kernels;
  for (int i = 0; i < kLayers; ++i) {
    const std::string layer = fmt::format("{}layer_{}", outer, i);
    want_slices[layer] = want_slices[layer + " > attention"] = want_slices[layer + " > mlp"] =
        kReplays;
    want_kernels[layer] = kAttention + kMlp;
    want_kernels[layer + " > attention"] = kAttention;
    want_kernels[layer + " > mlp"] = kMlp;
  }
  want_slices[outer + "head"] = kReplays;
  want_kernels[outer + "head"] = kHead;
  if (!outer.empty()) {
    want_slices["capture"] = kReplays;
    want_kernels["capture"] = kPerReplay;
  }
  EXPECT_EQ(slices_by_path, want_slices);
  EXPECT_EQ(kernels_per_slice, want_kernels);
  ExpectNested(ex);
  ExpectSlicesCoverTheirKernels(ex);
}

TEST(PerfettoGraphRanges, GraphKernelsCarryTheirCaptureRangesAndGetRangeSlices) {
  StatusOr<Trace> t = ImportTrace(kGraphTrace);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  PerfettoExportCounts counts;
  const Export ex = Parse(ExportPerfettoJson(*t, &counts));
  ASSERT_TRUE(ex.ok) << "not valid trace-event JSON";
  ExpectGraphDecodeLayout(ex, "capture", "capture > ");
  EXPECT_EQ(counts.graph_range_slices, static_cast<int64_t>(ex.slices.size()));
  EXPECT_EQ(counts.graph_range_slices, kReplays * (1 + kLayers * 3 + 1));
}

// The same trace without capture points (as a PyTorch profiler trace or a capture before the
// recorded window would give): the replays are aligned with the eager step, whose ranges make
// the slices, marked "aligned".
TEST(PerfettoGraphRanges, WithoutCapturePointsSlicesComeFromAlignment) {
  StatusOr<Trace> t = ImportTrace(kGraphTrace);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Trace stripped = std::move(*t);
  testing::RemoveCapturePoints(stripped);
  const Export ex = Parse(ExportPerfettoJson(stripped));
  ASSERT_TRUE(ex.ok);
  ExpectGraphDecodeLayout(ex, "aligned", "");
}

// A capture before the recorded window and no eager step in the trace (the serving loop of four
// buckets recorded on an H200, its capture points, eager kernels and the ranges outside the graph
// steps removed: tests/data/nsys/README.md): nothing to attribute from the trace itself; with the
// program's eager-only run as the reference, every graph kernel carries the ranges of its
// counterpart there, below the eager step, and the slices are marked "reference". Per replay the
// program launches 2 kernels in embed, 18 in each attention, 15 in each mlp and 13 in head.
TEST(PerfettoGraphRanges, WithAnEagerReferenceSlicesComeFromTheReference) {
  const std::string data = std::string(SIGHTLINE_SOURCE_DIR) + "/tests/data/nsys/";
  StatusOr<Trace> t = ImportTrace(data + "graph_serve_node_no_capture_no_eager_h200.sqlite.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  StatusOr<Trace> reference = ImportTrace(data + "graph_serve_eager_only_h200.sqlite.gz");
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  constexpr int kServeReplays = 40;

  PerfettoExportCounts without;
  const Export bare = Parse(ExportPerfettoJson(*t, &without));
  ASSERT_TRUE(bare.ok);
  EXPECT_EQ(without.graph_range_slices, 0);
  for (const KernelEvent& k : bare.kernels) EXPECT_FALSE(k.has_ranges);

  PerfettoExportOptions options;
  options.eager_reference = &*reference;
  PerfettoExportCounts counts;
  const Export ex = Parse(ExportPerfettoJson(*t, &counts, options));
  ASSERT_TRUE(ex.ok);
  std::map<std::string, int64_t> kernels_by_path;
  int64_t graph = 0;
  for (const KernelEvent& k : ex.kernels) {
    if (!k.graph) continue;
    ++graph;
    EXPECT_EQ(k.attributed_by, "reference");
    if (k.has_ranges) ++kernels_by_path[k.ranges];
  }
  EXPECT_EQ(graph, kServeReplays * kPerReplay);  // 279 per replay here too
  std::map<std::string, int64_t> want, want_slices;
  for (int i = 0; i < kLayers; ++i) {
    want[fmt::format("layer_{} > attention", i)] = kServeReplays * kAttention;
    want[fmt::format("layer_{} > mlp", i)] = kServeReplays * kMlp;
    want_slices[fmt::format("layer_{}", i)] = want_slices[fmt::format("layer_{} > attention", i)] =
        want_slices[fmt::format("layer_{} > mlp", i)] = kServeReplays;
  }
  want["head"] = kServeReplays * kHead;
  want["embed"] = kServeReplays * 2;  // the serving step's embed: 2 kernels
  want_slices["head"] = want_slices["embed"] = kServeReplays;
  EXPECT_EQ(kernels_by_path, want);
  std::map<std::string, int64_t> slices_by_path;
  for (const RangeSlice& s : ex.slices) {
    ++slices_by_path[s.path];
    EXPECT_EQ(s.attributed_by, "reference") << s.path;
  }
  EXPECT_EQ(slices_by_path, want_slices);
  EXPECT_EQ(counts.graph_range_slices, static_cast<int64_t>(ex.slices.size()));
  ExpectNested(ex);
  ExpectSlicesCoverTheirKernels(ex);
}

// Graph kernels of different ranges that overlap on one stream: the earlier slice ends where the
// later begins (marked clipped), so slices on the track still nest. Kernels without graph nodes
// carry no graph args; a trace without graph kernels gets no graph range track.
TEST(PerfettoGraphRanges, OverlappingKernelsStillNest) {
  testing::TraceFixture f;
  f.Device(0).Range("outer", 0, 300).Range("a", 10, 100).Range("b", 100, 200);
  f.Kernel("k_a", 1000, 1100, {}, 5).Kernel("k_b", 1050, 1200, {}, 5).Kernel("eager", 2000, 2100);
  Trace trace = f.Build();
  const Export plain = Parse(ExportPerfettoJson(trace));
  ASSERT_TRUE(plain.ok);
  EXPECT_TRUE(plain.slices.empty());
  KernelTable& k = trace.kernels;
  ASSERT_EQ(k.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    k.graph_node[i] = 10 + static_cast<int64_t>(i);
    k.capture_node[i] = 10 + static_cast<int64_t>(i);
    k.capture_ns[i] = i == 0 ? 50 : 150;
    k.capture_pid[i] = 100;
    k.capture_tid[i] = 100;
  }
  PerfettoExportCounts counts;
  const Export ex = Parse(ExportPerfettoJson(trace, &counts));
  ASSERT_TRUE(ex.ok);
  std::map<std::string, const RangeSlice*> by_path;
  for (const RangeSlice& s : ex.slices) by_path[s.path] = &s;
  ASSERT_EQ(by_path.size(), 3u);
  ASSERT_EQ(by_path.count("outer"), 1u);
  ASSERT_EQ(by_path.count("outer > a"), 1u);
  ASSERT_EQ(by_path.count("outer > b"), 1u);
  EXPECT_EQ(by_path["outer"]->kernels, 2);
  EXPECT_NEAR(by_path["outer"]->dur, 0.2, kEpsUs);
  EXPECT_TRUE(by_path["outer > a"]->clipped);
  EXPECT_NEAR(by_path["outer > a"]->dur, 0.05, kEpsUs);  // up to k_b's start, not k_a's end
  EXPECT_FALSE(by_path["outer > b"]->clipped);
  EXPECT_NEAR(by_path["outer > b"]->dur, 0.15, kEpsUs);
  EXPECT_EQ(StreamOf(ex, *by_path["outer > a"]), 7);
  ExpectNested(ex);
  int64_t graph_events = 0;
  for (const KernelEvent& e : ex.kernels) {
    graph_events += e.graph;
    if (!e.graph) {
      EXPECT_TRUE(e.attributed_by.empty());
    }
  }
  EXPECT_EQ(graph_events, 2);
}

// Hostile nesting: 1,000 ranges open at the capture point. The path keeps the innermost
// kMaxPathDepth of them; the track shows the outermost kMaxGraphRangeLevels of that path.
TEST(PerfettoGraphRanges, DeepNestingIsBounded) {
  testing::TraceFixture f;
  f.Device(0);
  constexpr int kDepth = 1000;
  for (int i = 0; i < kDepth; ++i) f.Range(fmt::format("r{}", i), i, 100'000 - i);
  f.Kernel("k", 200'000, 200'100, {}, 9);
  Trace trace = f.Build();
  trace.kernels.graph_node[0] = 1;
  trace.kernels.capture_node[0] = 1;
  trace.kernels.capture_ns[0] = 50'000;
  trace.kernels.capture_pid[0] = 100;
  trace.kernels.capture_tid[0] = 100;
  const Export ex = Parse(ExportPerfettoJson(trace));
  ASSERT_TRUE(ex.ok);
  ASSERT_EQ(ex.kernels.size(), 1u);
  const std::string& path = ex.kernels[0].ranges;
  EXPECT_EQ(std::count(path.begin(), path.end(), '>'), kMaxPathDepth - 1);
  EXPECT_TRUE(path.ends_with("r999"));
  EXPECT_TRUE(path.starts_with(fmt::format("r{} > ", kDepth - kMaxPathDepth)));
  ASSERT_EQ(ex.slices.size(), static_cast<size_t>(kMaxGraphRangeLevels));
  for (const RangeSlice& s : ex.slices) {
    EXPECT_TRUE(path.starts_with(s.path)) << s.path;
    EXPECT_EQ(s.kernels, 1);
  }
  ExpectNested(ex);
}

}  // namespace
}  // namespace sightline
