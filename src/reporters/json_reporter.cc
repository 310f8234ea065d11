// JSON reporter: the Report as documented in docs/formats/report-json.md. Values keep full
// precision (durations as integer ns); tables carry their column list so consumers can find units.
#include "base/json_writer.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

const char* UnitName(Unit unit) {
  switch (unit) {
    case Unit::kText:
      return "text";
    case Unit::kCount:
      return "count";
    case Unit::kDurationNs:
      return "ns";
    case Unit::kTimestampNs:
      return "timestamp_ns";
    case Unit::kBytes:
      return "bytes";
    case Unit::kPercent:
      return "percent";
    case Unit::kGBps:
      return "GB/s";
    case Unit::kRatio:
      return "ratio";
    case Unit::kNumber:
      return "number";
  }
  return "text";
}

void WriteValue(JsonWriter& w, const Value& v) {
  if (std::holds_alternative<int64_t>(v)) {
    w.Int(std::get<int64_t>(v));
  } else if (std::holds_alternative<double>(v)) {
    w.Double(std::get<double>(v));
  } else if (std::holds_alternative<std::string>(v)) {
    w.String(std::get<std::string>(v));
  } else {
    w.Null();
  }
}

void WriteFacts(JsonWriter& w, const std::vector<Fact>& facts) {
  w.BeginObject();
  for (const Fact& f : facts) {
    w.Key(f.key);
    WriteValue(w, f.value);
  }
  w.EndObject();
}

void WriteTable(JsonWriter& w, const Table& t) {
  w.BeginObject();
  w.Key("title").String(t.title);
  w.Key("columns").BeginArray();
  for (const Column& c : t.columns) {
    w.BeginObject().Key("key").String(c.key).Key("title").String(c.title);
    w.Key("unit").String(UnitName(c.unit)).EndObject();
  }
  w.EndArray();
  w.Key("total_rows").Int(t.total_rows >= 0 ? t.total_rows : static_cast<int64_t>(t.rows.size()));
  w.Key("rows").BeginArray();
  for (const std::vector<Value>& row : t.rows) {
    w.BeginObject();
    for (size_t i = 0; i < t.columns.size() && i < row.size(); ++i) {
      w.Key(t.columns[i].key);
      WriteValue(w, row[i]);
    }
    w.EndObject();
  }
  w.EndArray();
  if (!t.note.empty()) w.Key("note").String(t.note);
  w.EndObject();
}

void WriteDiagnostics(JsonWriter& w, const Diagnostics& diagnostics) {
  w.BeginArray();
  for (const Diagnostic& d : diagnostics.items()) {
    w.BeginObject();
    w.Key("code").String(d.code());
    w.Key("severity").String(d.severity() == DiagnosticSeverity::kInfo ? "info" : "warning");
    w.Key("count").Int(d.count);
    w.Key("message").String(d.message());
    if (!d.detail.empty()) w.Key("detail").String(d.detail);
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string RenderJsonReport(const Report& report) {
  JsonWriter w(1);
  w.BeginObject();
  w.Key("schema_version").Int(kReportSchemaVersion);
  w.Key("tool").BeginObject().Key("name").String("sightline");
  w.Key("version").String(report.tool_version).EndObject();
  if (report.run.mpi_processes > 0) {
    const RunInfo& run = report.run;
    w.Key("run").BeginObject();
    w.Key("mpi_processes").Int(run.mpi_processes);
    w.Key("ranks_per_process").BeginArray();
    for (int64_t n : run.ranks_per_process) w.Int(n);
    w.EndArray();
    w.Key("seconds_per_process").BeginArray();
    for (double s : run.seconds_per_process) w.Double(s);
    w.EndArray();
    w.Key("slowest_process").Int(run.slowest_process);
    w.EndObject();
  }

  w.Key("inputs").BeginArray();
  for (const ReportInput& in : report.inputs) {
    w.BeginObject();
    w.Key("label").String(in.label);
    w.Key("path").String(in.path);
    w.Key("format").String(in.format);
    w.Key("format_version").String(in.format_version);
    w.Key("producer").String(in.producer);
    w.Key("rank");
    if (in.rank >= 0) {
      w.Int(in.rank);
    } else {
      w.Null();
    }
    w.Key("diagnostics");
    WriteDiagnostics(w, in.diagnostics);
    w.EndObject();
  }
  w.EndArray();
  if (!report.files.empty()) {
    w.Key("files").BeginArray();
    for (const InputFile& f : report.files) {
      w.BeginObject();
      w.Key("path").String(f.path);
      w.Key("reader");
      if (f.reader.empty()) {
        w.Null();
      } else {
        w.String(f.reader);
      }
      w.Key("kind").String(f.kind);
      w.Key("use").String(f.use);
      w.EndObject();
    }
    w.EndArray();
  }

  w.Key("sections").BeginArray();
  for (const Section& s : report.sections) {
    w.BeginObject();
    w.Key("key").String(s.key);
    w.Key("title").String(s.title);
    w.Key("input");
    if (s.input >= 0) {
      w.Int(s.input);
    } else {
      w.Null();
    }
    w.Key("facts");
    WriteFacts(w, s.facts);
    w.Key("tables").BeginObject();
    for (const Table& t : s.tables) {
      w.Key(t.key);
      WriteTable(w, t);
    }
    w.EndObject();
    if (!s.series.empty()) {
      w.Key("series").BeginObject();
      for (const Series& se : s.series) {
        w.Key(se.key).BeginObject();
        w.Key("title").String(se.title);
        if (se.style == SeriesStyle::kCdf) w.Key("style").String("cdf");
        if (se.style == SeriesStyle::kOverTime) w.Key("style").String("over_time");
        w.Key("x_unit").String(UnitName(se.x_unit));
        w.Key("y_unit").String(UnitName(se.y_unit));
        w.Key("x").BeginArray();
        for (double x : se.x) w.Double(x);
        w.EndArray();
        w.Key("y").BeginArray();
        for (double y : se.y) w.Double(y);
        w.EndArray();
        if (!se.y_label.empty()) w.Key("y_label").String(se.y_label);
        if (!se.labels.empty()) {
          w.Key("labels").BeginArray();
          for (const std::string& label : se.labels) w.String(label);
          w.EndArray();
        }
        if (!se.y2.empty()) {
          w.Key("y2_label").String(se.y2_label);
          w.Key("y2").BeginArray();
          for (double y : se.y2) w.Double(y);
          w.EndArray();
        }
        if (!se.lines.empty()) {
          w.Key("lines").BeginArray();
          for (const Series::Line& l : se.lines) {
            w.BeginObject();
            w.Key("label").String(l.label);
            w.Key("y").BeginArray();
            for (double y : l.y) w.Double(y);
            w.EndArray();
            if (!l.band_max.empty()) {
              w.Key("y_max").BeginArray();
              for (double y : l.band_max) w.Double(y);
              w.EndArray();
            }
            w.EndObject();
          }
          w.EndArray();
        }
        if (!se.marks.empty()) {
          w.Key("marks").BeginArray();
          for (const Series::Mark& mark : se.marks) {
            w.BeginObject();
            w.Key("x").Double(mark.x);
            w.Key("y").Double(mark.y);
            w.Key("label").String(mark.label);
            w.EndObject();
          }
          w.EndArray();
        }
        w.EndObject();
      }
      w.EndObject();
    }
    if (!s.graphs.empty()) {
      w.Key("graphs").BeginObject();
      for (const Graph& g : s.graphs) {
        w.Key(g.key).BeginObject();
        w.Key("title").String(g.title);
        w.Key("nodes").BeginArray();
        for (const GraphNode& n : g.nodes) {
          w.BeginObject();
          w.Key("label").String(n.label);
          w.Key("detail").String(n.detail);
          w.Key("heat").Double(n.heat);
          if (n.terminal) w.Key("terminal").Bool(true);
          w.EndObject();
        }
        w.EndArray();
        w.Key("edges").BeginArray();
        for (const GraphEdge& e : g.edges) {
          w.BeginArray();
          w.Int(e.from);
          w.Int(e.to);
          w.EndArray();
        }
        w.EndArray();
        w.EndObject();
      }
      w.EndObject();
    }
    if (!s.timelines.empty()) {
      w.Key("timelines").BeginObject();
      for (const Timeline& tl : s.timelines) {
        w.Key(tl.key).BeginObject();
        w.Key("title").String(tl.title);
        w.Key("start_ns").Int(tl.start_ns);
        w.Key("end_ns").Int(tl.end_ns);
        w.Key("lanes").BeginArray();
        for (const TimelineLane& lane : tl.lanes) {
          w.BeginObject();
          w.Key("label").String(lane.label);
          w.Key("spans").BeginArray();
          for (const TimelineSpan& sp : lane.spans) {
            w.BeginObject();
            w.Key("start_ns").Int(sp.start_ns);
            w.Key("end_ns").Int(sp.end_ns);
            w.Key("kind").String(sp.kind);
            w.Key("label").String(sp.label);
            w.EndObject();
          }
          w.EndArray();
          w.EndObject();
        }
        w.EndArray();
        if (!tl.note.empty()) w.Key("note").String(tl.note);
        w.EndObject();
      }
      w.EndObject();
    }
    if (!s.notes.empty()) {
      w.Key("notes").BeginArray();
      for (const std::string& n : s.notes) w.String(n);
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndArray();

  w.Key("findings").BeginArray();
  for (const Finding& f : report.findings) {
    w.BeginObject();
    w.Key("id").String(f.id);
    w.Key("severity").String(SeverityName(f.severity));
    w.Key("title").String(f.title);
    w.Key("where").String(f.where);
    w.Key("evidence");
    WriteFacts(w, f.evidence);
    w.Key("recommendation").String(f.recommendation);
    w.Key("estimated_savings_ns").Int(f.estimated_savings_ns);
    w.Key("input");
    if (f.input >= 0) {
      w.Int(f.input);
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::string out = w.Take();
  out.push_back('\n');
  return out;
}

}  // namespace sightline
