// The Report's description of itself (describe.h says how to read it): every struct of report.h,
// field by field in JSON order, with its JSON presence and meaning. The JSON writer, the MPI codec
// and the field list in docs/formats/report-json.md all come from here; a field added to a struct
// of report.h must be added here too (report_schema_test checks that none is missing).
#pragma once

#include <span>
#include <string_view>

#include "report/describe.h"
#include "report/report.h"

namespace sightline {

template <>
struct EnumNames<Unit> {
  static std::span<const std::string_view> Names() {
    static constexpr std::string_view kNames[] = {
        "text", "count", "ns", "timestamp_ns", "bytes", "percent", "GB/s", "ratio", "number"};
    return kNames;
  }
};

template <>
struct EnumNames<SeriesStyle> {
  static std::span<const std::string_view> Names() {
    static constexpr std::string_view kNames[] = {"auto", "cdf", "over_time"};
    return kNames;
  }
};

template <>
struct EnumNames<Severity> {
  static std::span<const std::string_view> Names() {
    static constexpr std::string_view kNames[] = {"low", "medium", "high"};
    return kNames;
  }
};

// Diagnostic codes: JSON names them through the catalogue (`code`); the codec carries the index.
template <>
struct EnumNames<DiagCode> {
  static std::span<const std::string_view> Names();
};

// Diagnostics is a list of Diagnostic; reading one back adds it (a zero count adds nothing).
template <>
struct ListTraits<Diagnostics> {
  using Element = Diagnostic;
  static const std::vector<Diagnostic>& Items(const Diagnostics& d) { return d.items(); }
  static void Append(Diagnostics& d, Diagnostic&& e) { d.Add(e.id, e.count, std::move(e.detail)); }
};

template <class V, Is<Diagnostic> T>
void Describe(V& v, T& d) {
  v.Field("id", d.id, {.json = InJson::kNever});
  v.Computed("code", [&] { return d.code(); },
             {.doc = "one of the codes in [../diagnostics.md](../diagnostics.md)"});
  v.Computed("severity",
             [&] { return d.severity() == DiagnosticSeverity::kInfo ? "info" : "warning"; },
             {.doc = "`info` for expected drops (flow events), `warning` for data that may change "
                     "results"});
  v.Field("count", d.count, {.doc = "how many records"});
  v.Computed("message", [&] { return d.message(); }, {.doc = "fixed per code"});
  v.Field("detail", d.detail,
          {.json = InJson::kOmitEmpty,
           .doc = "the variable part (which Kineto category, how many bytes were not read); a code "
                  "with several details appears once per detail"});
}

template <class V, Is<ReportInput> T>
void Describe(V& v, T& in) {
  v.Field("label", in.label, {.doc = "file name, or \"rank N\""});
  v.Field("path", in.path);
  v.Field("format", in.format, {.doc = "the reader that took it (`sightline formats`)"});
  v.Field("format_version", in.format_version);
  v.Field("producer", in.producer, {.doc = "the tool that wrote the file, when it says"});
  v.Field("rank", in.rank,
          {.json = InJson::kNullIfNegative, .doc = "the distributed rank, when the trace says it"});
  v.Field("diagnostics", in.diagnostics,
          {.doc = "what the importer or builder could not use, with counts"});
}

template <class V, Is<InputFile> T>
void Describe(V& v, T& f) {
  v.Field("path", f.path);
  v.Field(
      "reader", f.reader,
      {.json = InJson::kNullIfEmpty, .doc = "the reader that took it; null for a skipped file"});
  v.Field("kind", f.kind, {.doc = "what it holds (\"serving results\")"});
  v.Field("use", f.use, {.doc = "what it was used for, or why it was skipped"});
}

template <class V, Is<RunInfo> T>
void Describe(V& v, T& r) {
  v.Field("mpi_processes", r.mpi_processes);
  v.Field("ranks_per_process", r.ranks_per_process, {.doc = "rank files each process imported"});
  v.Field("seconds_per_process", r.seconds_per_process, {.doc = "wall time of each one's share"});
  v.Field("slowest_process", r.slowest_process, {.doc = "index of the slowest"});
}

template <class V, Is<Fact> T>
void Describe(V& v, T& f) {
  v.Field("key", f.key, {.shape = JsonShape::kKey});
  v.Field("label", f.label, {.json = InJson::kNever});
  v.Field("value", f.value);
  v.Field("unit", f.unit, {.json = InJson::kNever});
}

template <class V, Is<Column> T>
void Describe(V& v, T& c) {
  v.Field("key", c.key, {.doc = "the key of this column's values in each row"});
  v.Field("title", c.title);
  v.Field("unit", c.unit);
  v.Field("optional", c.optional, {.json = InJson::kNever});
}

template <class V, Is<Table> T>
void Describe(V& v, T& t) {
  v.Field("key", t.key, {.shape = JsonShape::kKey});
  v.Field("title", t.title);
  v.Field("columns", t.columns);
  v.Field("total_rows", t.total_rows, {.json = InJson::kNever});
  v.Computed("total_rows",
             [&] { return t.total_rows >= 0 ? t.total_rows : static_cast<int64_t>(t.rows.size()); },
             {.doc = "rows before a long table was cut to its top rows"});
  v.Field("rows", t.rows, {.shape = JsonShape::kRowObjects, .row_keys = &t.columns});
  v.Field("note", t.note, {.json = InJson::kOmitEmpty, .doc = "shown under the table"});
}

template <class V, Is<Series::Mark> T>
void Describe(V& v, T& m) {
  v.Field("x", m.x);
  v.Field("y", m.y);
  v.Field("label", m.label, {.doc = "e.g. \"peak 1.95 GiB\""});
}

template <class V, Is<Series::Line> T>
void Describe(V& v, T& l) {
  v.Field("label", l.label);
  v.Field("y", l.y, {.doc = "parallel to the series' `x`; null where there is no data (a gap)"});
  v.Field("y_max", l.band_max,
          {.json = InJson::kOmitEmpty,
           .doc = "the largest value inside each bucket, above the line's mean"});
}

template <class V, Is<Series> T>
void Describe(V& v, T& s) {
  v.Field("key", s.key, {.shape = JsonShape::kKey});
  v.Field("title", s.title);
  v.Field("style", s.style,
          {.json = InJson::kOmitEmpty,
           .doc = "`cdf`: x ascending values, y the percent of values at or below x; "
                  "`over_time`: x = bucket start in ns from the trace's begin, on the overview's "
                  "utilization buckets; absent: y over x"});
  v.Field("x_unit", s.x_unit);
  v.Field("y_unit", s.y_unit);
  v.Field("x", s.x);
  v.Field("y", s.y, {.doc = "empty when the series has `lines`"});
  v.Field("y_label", s.y_label, {.json = InJson::kOmitEmpty});
  v.Field("labels", s.labels,
          {.json = InJson::kOmitEmpty,
           .doc = "categories: one per point of `y` (`x` is then 0, 1, ...), a bar per label"});
  v.Field("y2_label", s.y2_label,
          {.json = InJson::kWhen, .when = !s.y2.empty(), .when_doc = "when `y2` is present"});
  v.Field("y2", s.y2,
          {.json = InJson::kOmitEmpty, .doc = "a second line over the same x and unit"});
  v.Field("lines", s.lines,
          {.json = InJson::kOmitEmpty,
           .doc = "several named lines over one x, drawn with a legend (instead of `y`)"});
  v.Field("marks", s.marks, {.json = InJson::kOmitEmpty, .doc = "points called out on the chart"});
  v.Field("time_axis", s.time_axis, {.json = InJson::kNever});
}

template <class V, Is<GraphNode> T>
void Describe(V& v, T& n) {
  v.Field("label", n.label);
  v.Field("detail", n.detail);
  v.Field("tooltip", n.tooltip, {.json = InJson::kNever});
  v.Field("heat", n.heat, {.doc = "0..1, the node's colour on a white-to-red scale"});
  v.Field("terminal", n.terminal,
          {.json = InJson::kOmitEmpty, .doc = "true for an input or output of the whole graph"});
}

template <class V, Is<GraphEdge> T>
void Describe(V& v, T& e) {
  v.Field("from", e.from);
  v.Field("to", e.to);
}

template <class V, Is<Graph> T>
void Describe(V& v, T& g) {
  v.Field("key", g.key, {.shape = JsonShape::kKey});
  v.Field("title", g.title);
  v.Field("nodes", g.nodes, {.doc = "in a topological order"});
  v.Field("edges", g.edges, {.shape = JsonShape::kTuples, .doc = "indexes into `nodes`"});
  v.Field("note", g.note, {.json = InJson::kNever});
}

template <class V, Is<TimelineSpan> T>
void Describe(V& v, T& s) {
  v.Field("start_ns", s.start_ns);
  v.Field("end_ns", s.end_ns);
  v.Field("kind", s.kind,
          {.doc = "`gpu`, `cuda_api`, `nvtx`, `gil_held`, `gil_wait`, `gc` or `os_wait`"});
  v.Field("label", s.label);
}

template <class V, Is<TimelineLane> T>
void Describe(V& v, T& l) {
  v.Field("label", l.label);
  v.Field("spans", l.spans);
}

template <class V, Is<Timeline> T>
void Describe(V& v, T& t) {
  v.Field("key", t.key, {.shape = JsonShape::kKey});
  v.Field("title", t.title);
  v.Field("start_ns", t.start_ns);
  v.Field("end_ns", t.end_ns);
  v.Field("lanes", t.lanes);
  v.Field("note", t.note, {.json = InJson::kOmitEmpty});
}

template <class V, Is<TimeMark> T>
void Describe(V& v, T& m) {
  v.Field("x_ns", m.x_ns);
  v.Field("label", m.label);
}

template <class V, Is<Section> T>
void Describe(V& v, T& s) {
  v.Field("key", s.key, {.doc = "the analysis, e.g. `kernel_summary` (docs/analyses/)"});
  v.Field("title", s.title);
  v.Field("input", s.input,
          {.json = InJson::kNullIfNegative,
           .doc = "index into `inputs`; null for a section about all inputs"});
  v.Field("facts", s.facts, {.shape = JsonShape::kKeyedValues, .doc = "single values"});
  v.Field("tables", s.tables,
          {.shape = JsonShape::kKeyedObjects, .doc = "per analysis in docs/analyses/"});
  v.Field("series", s.series,
          {.json = InJson::kOmitEmpty, .shape = JsonShape::kKeyedObjects, .doc = "charts' data"});
  v.Field("graphs", s.graphs, {.json = InJson::kOmitEmpty, .shape = JsonShape::kKeyedObjects});
  v.Field("timelines", s.timelines,
          {.json = InJson::kOmitEmpty, .shape = JsonShape::kKeyedObjects});
  v.Field("notes", s.notes, {.json = InJson::kOmitEmpty});
  v.Field("charts", s.charts, {.json = InJson::kNever});
  v.Field("time_marks", s.time_marks, {.json = InJson::kNever});
}

template <class V, Is<FindingSpan> T>
void Describe(V& v, T& s) {
  v.Field("start_ns", s.start_ns);
  v.Field("end_ns", s.end_ns);
  v.Field("device", s.device);
}

template <class V, Is<Finding> T>
void Describe(V& v, T& f) {
  v.Field("id", f.id, {.doc = "the rule, e.g. `launch_bound` (`sightline findings`)"});
  v.Field("severity", f.severity);
  v.Field("title", f.title);
  v.Field("where", f.where, {.doc = "iteration, time range, stream or NVTX path"});
  v.Field("evidence", f.evidence, {.shape = JsonShape::kKeyedValues});
  v.Field("recommendation", f.recommendation);
  v.Field("estimated_savings_ns", f.estimated_savings_ns,
          {.doc = "per run of the measured loop; with `once_per_start`, the start-up time"});
  v.Field("once_per_start", f.once_per_start,
          {.doc = "about start-up (paid once per process start); ranked after the others"});
  v.Field("input", f.input,
          {.json = InJson::kNullIfNegative, .doc = "index into `inputs`; null: about all inputs"});
  v.Field("spans", f.spans,
          {.json = InJson::kNever, .doc = "in the Perfetto export (docs/formats/perfetto.md)"});
}

template <class V, Is<GateVerdict> T>
void Describe(V& v, T& g) {
  v.Field("failed", g.failed);
  v.Field("undecided", g.undecided);
  v.Field("message", g.message);
}

template <class V, Is<Report> T>
void Describe(V& v, T& r) {
  v.Computed("schema_version", [] { return int64_t{kReportSchemaVersion}; },
             {.doc = "see \"Versions\""});
  v.Object("tool", [&](auto& tool) {
    tool.Computed("name", [] { return "sightline"; });
    tool.Field("version", r.tool_version);
  });
  v.Field("run", r.run,
          {.json = InJson::kWhen,
           .when = r.run.mpi_processes > 0,
           .when_doc = "when the ranks were spread over MPI processes (`mpirun -n K`)"});
  v.Field("inputs", r.inputs, {.doc = "one per trace given, in order"});
  v.Field("files", r.files,
          {.json = InJson::kOmitEmpty,
           .doc = "the files read besides traces (serving results, an iteration log) or skipped"});
  v.Field("sections", r.sections,
          {.doc = "one per analysis and input, in report order (`sightline analyze --list`)"});
  v.Field("findings", r.findings, {.doc = "largest `estimated_savings_ns` first"});
  v.Field("gate", r.gate, {.json = InJson::kNever, .doc = "shown through its section"});
}

}  // namespace sightline
