#include "report/report_codec.h"

namespace sightline {
namespace {

void PutValue(const Value& v, ByteWriter& w) {
  w.Put<uint8_t>(static_cast<uint8_t>(v.index()));
  if (const auto* i = std::get_if<int64_t>(&v)) w.Put(*i);
  if (const auto* d = std::get_if<double>(&v)) w.Put(*d);
  if (const auto* s = std::get_if<std::string>(&v)) w.PutString(*s);
}

Value GetValue(ByteReader& r) {
  switch (r.Get<uint8_t>()) {
    case 1:
      return r.Get<int64_t>();
    case 2:
      return r.Get<double>();
    case 3:
      return r.GetString();
    default:
      return Value();
  }
}

void PutFacts(const std::vector<Fact>& facts, ByteWriter& w) {
  w.Put<uint64_t>(facts.size());
  for (const Fact& f : facts) {
    w.PutString(f.key);
    w.PutString(f.label);
    PutValue(f.value, w);
    w.Put(f.unit);
  }
}

std::vector<Fact> GetFacts(ByteReader& r) {
  std::vector<Fact> facts(r.GetCount(8));
  for (Fact& f : facts) {
    f.key = r.GetString();
    f.label = r.GetString();
    f.value = GetValue(r);
    f.unit = r.Get<Unit>();
  }
  return facts;
}

void PutStrings(const std::vector<std::string>& v, ByteWriter& w) {
  w.Put<uint64_t>(v.size());
  for (const std::string& s : v) w.PutString(s);
}

std::vector<std::string> GetStrings(ByteReader& r) {
  std::vector<std::string> v(r.GetCount(8));
  for (std::string& s : v) s = r.GetString();
  return v;
}

void PutDoubles(const std::vector<double>& v, ByteWriter& w) {
  w.Put<uint64_t>(v.size());
  for (double d : v) w.Put(d);
}

std::vector<double> GetDoubles(ByteReader& r) {
  std::vector<double> v(r.GetCount(sizeof(double)));
  for (double& d : v) d = r.Get<double>();
  return v;
}

}  // namespace

void EncodeReportInput(const ReportInput& in, ByteWriter& w) {
  w.PutString(in.label);
  w.PutString(in.path);
  w.PutString(in.format);
  w.PutString(in.format_version);
  w.PutString(in.producer);
  w.Put(in.rank);
  w.Put<uint64_t>(in.diagnostics.items().size());
  for (const Diagnostic& d : in.diagnostics.items()) {
    w.Put(d.id);
    w.PutString(d.detail);
    w.Put(d.count);
  }
}

ReportInput DecodeReportInput(ByteReader& r) {
  ReportInput in;
  in.label = r.GetString();
  in.path = r.GetString();
  in.format = r.GetString();
  in.format_version = r.GetString();
  in.producer = r.GetString();
  in.rank = r.Get<int32_t>();
  const uint64_t n = r.GetCount(18);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    const DiagCode id = r.Get<DiagCode>();
    if (static_cast<size_t>(id) >= DiagnosticCatalogue().size()) {
      r.GetString();  // fails the reader below: a code this build does not know
      break;
    }
    std::string detail = r.GetString();
    const int64_t count = r.Get<int64_t>();
    if (count != 0) in.diagnostics.Add(id, count, std::move(detail));
  }
  return in;
}

void EncodeSection(const Section& s, ByteWriter& w) {
  w.PutString(s.key);
  w.PutString(s.title);
  w.Put<int32_t>(s.input);
  PutFacts(s.facts, w);
  w.Put<uint64_t>(s.tables.size());
  for (const Table& t : s.tables) {
    w.PutString(t.key);
    w.PutString(t.title);
    w.Put<uint64_t>(t.columns.size());
    for (const Column& c : t.columns) {
      w.PutString(c.key);
      w.PutString(c.title);
      w.Put(c.unit);
      w.Put<uint8_t>(c.optional);
    }
    w.Put<uint64_t>(t.rows.size());
    for (const std::vector<Value>& row : t.rows) {
      w.Put<uint64_t>(row.size());
      for (const Value& v : row) PutValue(v, w);
    }
    w.Put(t.total_rows);
    w.PutString(t.note);
  }
  w.Put<uint64_t>(s.series.size());
  for (const Series& x : s.series) {
    w.PutString(x.key);
    w.PutString(x.title);
    w.Put(x.style);
    w.Put(x.x_unit);
    w.Put(x.y_unit);
    PutDoubles(x.x, w);
    PutDoubles(x.y, w);
    PutDoubles(x.y2, w);
    w.PutString(x.y_label);
    w.PutString(x.y2_label);
    PutStrings(x.labels, w);
    w.Put<uint64_t>(x.marks.size());
    for (const Series::Mark& m : x.marks) {
      w.Put(m.x);
      w.Put(m.y);
      w.PutString(m.label);
    }
    w.Put<uint64_t>(x.lines.size());
    for (const Series::Line& l : x.lines) {
      w.PutString(l.label);
      PutDoubles(l.y, w);
      PutDoubles(l.band_max, w);
    }
  }
  w.Put<uint64_t>(s.graphs.size());
  for (const Graph& g : s.graphs) {
    w.PutString(g.key);
    w.PutString(g.title);
    w.Put<uint64_t>(g.nodes.size());
    for (const GraphNode& n : g.nodes) {
      w.PutString(n.label);
      w.PutString(n.detail);
      w.PutString(n.tooltip);
      w.Put(n.heat);
      w.Put<uint8_t>(n.terminal);
    }
    w.Put<uint64_t>(g.edges.size());
    for (const GraphEdge& e : g.edges) {
      w.Put<int32_t>(e.from);
      w.Put<int32_t>(e.to);
    }
    w.PutString(g.note);
  }
  w.Put<uint64_t>(s.timelines.size());
  for (const Timeline& t : s.timelines) {
    w.PutString(t.key);
    w.PutString(t.title);
    w.Put(t.start_ns);
    w.Put(t.end_ns);
    w.Put<uint64_t>(t.lanes.size());
    for (const TimelineLane& l : t.lanes) {
      w.PutString(l.label);
      w.Put<uint64_t>(l.spans.size());
      for (const TimelineSpan& sp : l.spans) {
        w.Put(sp.start_ns);
        w.Put(sp.end_ns);
        w.PutString(sp.kind);
        w.PutString(sp.label);
      }
    }
    w.PutString(t.note);
  }
  PutStrings(s.notes, w);
}

Section DecodeSection(ByteReader& r) {
  Section s;
  s.key = r.GetString();
  s.title = r.GetString();
  s.input = r.Get<int32_t>();
  s.facts = GetFacts(r);
  for (uint64_t i = 0, n = r.GetCount(8); i < n && r.ok(); ++i) {
    Table& t = s.tables.emplace_back();
    t.key = r.GetString();
    t.title = r.GetString();
    t.columns.resize(r.GetCount(8));
    for (Column& c : t.columns) {
      c.key = r.GetString();
      c.title = r.GetString();
      c.unit = r.Get<Unit>();
      c.optional = r.Get<uint8_t>() != 0;
    }
    t.rows.resize(r.GetCount(8));
    for (std::vector<Value>& row : t.rows) {
      row.resize(r.GetCount(1));
      for (Value& v : row) v = GetValue(r);
    }
    t.total_rows = r.Get<int64_t>();
    t.note = r.GetString();
  }
  for (uint64_t i = 0, n = r.GetCount(8); i < n && r.ok(); ++i) {
    Series& x = s.series.emplace_back();
    x.key = r.GetString();
    x.title = r.GetString();
    x.style = r.Get<SeriesStyle>();
    x.x_unit = r.Get<Unit>();
    x.y_unit = r.Get<Unit>();
    x.x = GetDoubles(r);
    x.y = GetDoubles(r);
    x.y2 = GetDoubles(r);
    x.y_label = r.GetString();
    x.y2_label = r.GetString();
    x.labels = GetStrings(r);
    x.marks.resize(r.GetCount(24));
    for (Series::Mark& m : x.marks) {
      m.x = r.Get<double>();
      m.y = r.Get<double>();
      m.label = r.GetString();
    }
    x.lines.resize(r.GetCount(24));
    for (Series::Line& l : x.lines) {
      l.label = r.GetString();
      l.y = GetDoubles(r);
      l.band_max = GetDoubles(r);
    }
  }
  for (uint64_t i = 0, n = r.GetCount(8); i < n && r.ok(); ++i) {
    Graph& g = s.graphs.emplace_back();
    g.key = r.GetString();
    g.title = r.GetString();
    g.nodes.resize(r.GetCount(24));
    for (GraphNode& node : g.nodes) {
      node.label = r.GetString();
      node.detail = r.GetString();
      node.tooltip = r.GetString();
      node.heat = r.Get<double>();
      node.terminal = r.Get<uint8_t>() != 0;
    }
    g.edges.resize(r.GetCount(8));
    for (GraphEdge& e : g.edges) {
      e.from = r.Get<int32_t>();
      e.to = r.Get<int32_t>();
    }
    g.note = r.GetString();
  }
  for (uint64_t i = 0, n = r.GetCount(8); i < n && r.ok(); ++i) {
    Timeline& t = s.timelines.emplace_back();
    t.key = r.GetString();
    t.title = r.GetString();
    t.start_ns = r.Get<TimeNs>();
    t.end_ns = r.Get<TimeNs>();
    t.lanes.resize(r.GetCount(16));
    for (TimelineLane& l : t.lanes) {
      l.label = r.GetString();
      l.spans.resize(r.GetCount(32));
      for (TimelineSpan& sp : l.spans) {
        sp.start_ns = r.Get<TimeNs>();
        sp.end_ns = r.Get<TimeNs>();
        sp.kind = r.GetString();
        sp.label = r.GetString();
      }
    }
    t.note = r.GetString();
  }
  s.notes = GetStrings(r);
  return s;
}

void EncodeFinding(const Finding& f, ByteWriter& w) {
  w.PutString(f.id);
  w.Put(f.severity);
  w.PutString(f.title);
  PutFacts(f.evidence, w);
  w.PutString(f.where);
  w.PutString(f.recommendation);
  w.Put(f.estimated_savings_ns);
  w.Put<int32_t>(f.input);
  w.Put<uint64_t>(f.spans.size());
  for (const FindingSpan& sp : f.spans) {
    w.Put(sp.start_ns);
    w.Put(sp.end_ns);
    w.Put(sp.device);
  }
}

Finding DecodeFinding(ByteReader& r) {
  Finding f;
  f.id = r.GetString();
  f.severity = r.Get<Severity>();
  f.title = r.GetString();
  f.evidence = GetFacts(r);
  f.where = r.GetString();
  f.recommendation = r.GetString();
  f.estimated_savings_ns = r.Get<int64_t>();
  f.input = r.Get<int32_t>();
  f.spans.resize(r.GetCount(20));
  for (FindingSpan& sp : f.spans) {
    sp.start_ns = r.Get<TimeNs>();
    sp.end_ns = r.Get<TimeNs>();
    sp.device = r.Get<int32_t>();
  }
  return f;
}

}  // namespace sightline
