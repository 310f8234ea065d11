// The Report: what analyses produce and reporters render. Sections hold facts (key/value),
// tables whose columns carry units, series for charts, and notes; the report also carries findings
// and data-loss diagnostics. Reporters see only this, so adding an analysis never touches them.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/time_units.h"
#include "model/diagnostics.h"

namespace sightline {

inline constexpr int kReportSchemaVersion = 2;  // docs/formats/report-json.md, "Versions"

// How a value is shown. JSON keys of kDurationNs/kTimestampNs values end in "_ns", kBytes in
// "_bytes", kPercent in "_pct", kGBps in "_gbps" (the key names carry the unit).
enum class Unit {
  kText,
  kCount,
  kDurationNs,
  kTimestampNs,  // shown relative to the trace start in text
  kBytes,
  kPercent,
  kGBps,
  kRatio,
  kNumber,
};

using Value = std::variant<std::monostate, int64_t, double, std::string>;

struct Column {
  std::string key;    // JSON key, snake_case with unit suffix
  std::string title;  // header in text/HTML
  Unit unit = Unit::kText;
  // A detail column (e.g. the full demangled name beside the short one): the text reporter leaves
  // it out when the table would not fit the terminal; JSON always has it.
  bool optional = false;
};

struct Table {
  std::string key;
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
  int64_t total_rows = -1;  // rows before truncation to the top N; -1 = not truncated
  std::string note;         // shown under the table
};

struct Fact {
  std::string key;
  std::string label;
  Value value;
  Unit unit = Unit::kText;
};

// How a series is meant to be read. kAuto: time-like x as a step line, else columns.
// kCdf: a cumulative distribution, x ascending values, y the percent of values at or below x.
// kOverTime: x is time from the trace's begin on the buckets of the overview's utilization chart
// (each point holds until the next), so that it lines up with that chart and the iteration marks.
enum class SeriesStyle { kAuto, kCdf, kOverTime };

// A chart's data: y over x (e.g. utilization per time bucket, a histogram).
struct Series {
  std::string key;
  std::string title;
  SeriesStyle style = SeriesStyle::kAuto;
  Unit x_unit = Unit::kNumber, y_unit = Unit::kNumber;
  std::vector<double> x, y;
  // A second line over the same x and unit (e.g. reserved beside allocated); empty when none.
  // y_label / y2_label name the two lines.
  std::vector<double> y2;
  std::string y_label, y2_label;
  // Categories: when not empty, one label per point of y (x holds their positions 0, 1, ...):
  // the series is a bar per label, in this order (e.g. GPU time per range of a graph step).
  std::vector<std::string> labels;
  // Points called out on the chart (e.g. the peak).
  struct Mark {
    double x = 0, y = 0;
    std::string label;
  };
  std::vector<Mark> marks;
  // Several named lines over the same x and unit, drawn in one chart with a legend (used instead of
  // y; e.g. the sampled GPU metrics of one kind). A NaN in y is no data there (a gap, never a
  // zero). `band_max`, when not empty, is parallel to y: the largest value inside each bucket,
  // drawn as a band above the line (the line is the bucket's mean).
  struct Line {
    std::string label;
    std::vector<double> y, band_max;
  };
  std::vector<Line> lines;
  // x is time from the trace's begin, as kOverTime says, on a series that JSON keeps kAuto for
  // (schema 2): drawn as steps under the input's time marks. Not in JSON.
  bool time_axis = false;
};

// A directed acyclic graph (a TensorRT engine's layers): nodes in a topological order, edges
// between them. The HTML report draws it (layered, top to bottom); JSON lists it.
struct GraphNode {
  std::string label;   // first line (shortened to fit)
  std::string detail;  // second line
  std::string tooltip;
  double heat = 0;        // [0, 1]: the node's colour on a white-to-red scale
  bool terminal = false;  // an input or output of the whole graph (drawn as a pill, not a box)
};

struct GraphEdge {
  int from = 0, to = 0;  // indexes into nodes; from comes before to
};

struct Graph {
  std::string key;
  std::string title;
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::string note;  // shown under it
};

// A stretch of the timeline drawn lane by lane (the threads section's view of an iteration): the
// HTML report draws it, JSON lists it. `kind` picks the colour: "gpu", "cuda_api", "nvtx",
// "gil_held", "gil_wait", "gc", "os_wait".
struct TimelineSpan {
  TimeNs start_ns = 0, end_ns = 0;
  std::string kind;
  std::string label;  // tooltip
};

struct TimelineLane {
  std::string label;
  std::vector<TimelineSpan> spans;
};

struct Timeline {
  std::string key;
  std::string title;
  TimeNs start_ns = 0, end_ns = 0;
  std::vector<TimelineLane> lanes;
  std::string note;
};

// A point on an input's timeline (an iteration's start), in ns from the trace's begin: reporters
// draw it on every chart over time of the same input, whichever section the chart is in.
struct TimeMark {
  TimeNs x_ns = 0;
  std::string label;
};

struct Section {
  std::string key;    // analysis name, e.g. "kernel_summary"
  std::string title;  // "Kernels"
  int input = -1;     // index into Report::inputs; -1 when about all inputs
  std::vector<Fact> facts;
  // Deques: references returned by AddTable or series.emplace_back() stay valid as more are added.
  std::deque<Table> tables;
  std::deque<Series> series;
  std::deque<Graph> graphs;
  std::deque<Timeline> timelines;
  std::vector<std::string> notes;
  // Charts of numbers the tables above already hold (kernel time by category): drawn before
  // `series`, left out of JSON, where the tables carry the numbers.
  std::deque<Series> charts;
  // This input's time marks (see TimeMark); not in JSON, where a table holds them.
  std::vector<TimeMark> time_marks;

  Fact& AddFact(std::string key, std::string label, Value value, Unit unit = Unit::kText);
  Table& AddTable(std::string key, std::string title, std::vector<Column> columns);
  // A bar chart in `charts`: one bar per (label, value), in the order given.
  Series& AddBarChart(std::string key, std::string title, Unit unit,
                      const std::vector<std::pair<std::string, double>>& bars);
};

// Bars of values summed per label: labels with a positive sum, largest first (equal sums by label).
std::vector<std::pair<std::string, double>> SumsLargestFirst(
    const std::vector<std::pair<std::string, double>>& values);

enum class Severity { kLow, kMedium, kHigh };
const char* SeverityName(Severity s);

// A stretch of the timeline a finding points at (timeline annotations in the Perfetto export).
struct FindingSpan {
  TimeNs start_ns = 0, end_ns = 0;
  int32_t device = -1;  // -1: not tied to one device
};

struct Finding {
  static constexpr size_t kMaxSpans = 64;  // the largest ones are kept; docs/formats/perfetto.md

  std::string id;  // rule id, e.g. "launch_bound"
  Severity severity = Severity::kMedium;
  std::string title;
  std::vector<Fact> evidence;
  std::string where;  // iteration / time range / stream / NVTX path
  std::string recommendation;
  int64_t estimated_savings_ns = 0;
  // About start-up (compiling, autotuning, capture): paid once per process start, not per step;
  // estimated_savings_ns is then that start-up time. Ranked after the steady state's findings.
  bool once_per_start = false;
  int input = -1;
  std::vector<FindingSpan> spans;  // where in the timeline, in time order; at most kMaxSpans

  // Adds a span; past kMaxSpans the shortest is dropped. Call SortSpans() once all are added.
  void AddSpan(TimeNs start_ns, TimeNs end_ns, int32_t device = -1);
  void SortSpans();
};

struct ReportInput {
  std::string label;  // file name, or "rank N"
  std::string path;
  std::string format;
  std::string format_version;
  std::string producer;
  int32_t rank = -1;
  Diagnostics diagnostics;
};

// A file an `analyze` read, the reader that took it and what it was used for; listed when a run
// reads more than traces (serving results, an iteration log) or skips files of a directory.
struct InputFile {
  std::string path;
  std::string reader;  // the registry's name ("vllm-bench-results"); "" for a skipped file
  std::string kind;    // "serving results"
  std::string use;     // "joined to each trace's iterations by counter", "skipped: ..."
};

// A CI gate's verdict (`sightline diff --fail-if-slower`): the CLI exits 1 when it failed, 4 when
// the data cannot tell (the interval straddles the threshold), and repeats `message` on stderr.
// Reporters show the gate through its report section.
struct GateVerdict {
  bool failed = false;
  bool undecided = false;  // neither failed nor passed: more iterations or runs would tell
  std::string message;     // what failed or why it cannot tell, one line
};

// How a multi-rank report was made when the ranks were spread over MPI processes
// (`mpirun -n K sightline analyze`); mpi_processes == 0 (and no JSON "run") otherwise, so that the
// report of one process and of K processes differ only here.
struct RunInfo {
  int mpi_processes = 0;
  std::vector<int64_t> ranks_per_process;   // rank files each process imported
  std::vector<double> seconds_per_process;  // wall time of each process's share
  int slowest_process = -1;
};

struct Report {
  std::string tool_version;
  RunInfo run;
  std::vector<ReportInput> inputs;
  std::vector<InputFile> files;  // empty unless the run read more than traces (InputFile)
  std::vector<Section> sections;
  std::vector<Finding> findings;  // sorted by estimated_savings_ns, largest first
  GateVerdict gate;

  Section& AddSection(std::string key, std::string title, int input);
};

}  // namespace sightline
