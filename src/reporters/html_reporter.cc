// HTML reporter: the Report as one self-contained offline page (inline CSS and JS, no network).
// Charts are hand-written SVG drawn from what the sections give (their charts and series, the
// inputs' time marks); no section is named here. Every table is sortable by clicking its header.
// The page's size follows the Report, which is aggregated, not the trace's event count.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/time_units.h"
#include "report/value_format.h"
#include "reporters/html/html_util.h"
#include "reporters/reporter.h"
#include "svg/dag.h"
#include "svg/timeline.h"

namespace sightline {
namespace {

using html::XmlEscape;

constexpr const char* kStyle = R"css(
:root{--fg:#1d2330;--mut:#5b6475;--bg:#f6f7f9;--card:#fff;--line:#e1e4ea;--acc:#3a6fd8;
--hi:#c9372c;--med:#d9822b;--lo:#5b8c5a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg)}
header{background:#1d2330;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}header .inputs{color:#c4cad6;font-size:13px;margin-top:4px}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid var(--line);padding:6px 24px;
z-index:2;white-space:nowrap;overflow-x:auto}
nav a{color:var(--acc);text-decoration:none;margin-right:16px;font-size:13px}
main{max-width:1180px;margin:0 auto;padding:12px 24px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 18px;
margin:14px 0}
h2{font-size:17px;margin:4px 0 10px}h3{font-size:14px;margin:16px 0 6px;color:#333}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:2px 18px;
margin:0 0 8px}
.fact{display:flex;justify-content:space-between;gap:10px;border-bottom:1px dotted var(--line);
padding:2px 0}
.fact span:first-child{color:var(--mut);flex:0 1 auto}
.fact span:last-child{font-variant-numeric:tabular-nums;text-align:right;min-width:0;
overflow-wrap:break-word}
.fact span.n{white-space:nowrap}
.tw{overflow-x:auto;max-height:560px;overflow-y:auto;border:1px solid var(--line);border-radius:4px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:3px 8px;border-bottom:1px solid #eef0f3;text-align:left;vertical-align:top}
th{background:#f0f2f6;position:sticky;top:0;cursor:pointer;user-select:none;white-space:nowrap}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.txt{max-width:520px;overflow-wrap:anywhere}
tr:hover td{background:#f7f9fd}
.note{color:var(--mut);font-size:12px;margin:4px 0 0}
.chart{width:100%;max-width:760px;height:auto;display:block;margin:4px 0 10px}
.chart .grid{stroke:#e6e8ec}.chart text{font-size:11px;fill:#5b6475}
.chart .yl{text-anchor:end}.chart .xl.end{text-anchor:end}.chart .xl.mid{text-anchor:middle}.chart .bl{text-anchor:end;fill:#1d2330}
.chart .line{fill:none;stroke:var(--acc);stroke-width:1.5}.chart .area{fill:#3a6fd822}
.chart .col,.chart .bar{fill:var(--acc)}.chart .col:hover,.chart .bar:hover{fill:#1d4fb0}
.chart .marker{stroke:#d9822b;stroke-width:1;stroke-dasharray:3 3}
.ct{font-size:13px;font-weight:600;margin:12px 0 0}
.finding{border-left:4px solid var(--med);padding:6px 12px;margin:10px 0;background:#fbfbfc}
.finding.high{border-color:var(--hi)}.finding.low{border-color:var(--lo)}
.finding h3{margin:0 0 4px;display:inline}.finding summary{cursor:pointer;margin-bottom:4px}.sev{font-size:11px;text-transform:uppercase;color:#fff;
background:var(--med);border-radius:3px;padding:1px 6px;margin-right:6px}
.high .sev{background:var(--hi)}.low .sev{background:var(--lo)}
.save{color:var(--mut);font-weight:normal}.fix{margin:4px 0 0}
.diag td.warn{color:var(--hi)}
footer{color:var(--mut);font-size:12px;text-align:center;padding:10px}
)css";

// Sorts a table by the clicked column: numbers by data-v, text by content; click again reverses.
// The last line marks the body, so a test can tell that the script ran to its end.
constexpr const char* kScript = R"js(
document.querySelectorAll('table.sortable th').forEach(function(th){
  th.addEventListener('click',function(){
    var table=th.closest('table'),body=table.tBodies[0],i=th.cellIndex;
    var asc=th.getAttribute('aria-sort')!=='ascending';
    table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
    th.setAttribute('aria-sort',asc?'ascending':'descending');
    var num=th.classList.contains('num');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=a.cells[i],y=b.cells[i];
      if(num){var p=parseFloat(x.dataset.v),q=parseFloat(y.dataset.v);
        if(isNaN(p))p=-Infinity;if(isNaN(q))q=-Infinity;return asc?p-q:q-p;}
      var s=x.textContent,t=y.textContent;return asc?s.localeCompare(t):t.localeCompare(s);
    });
    rows.forEach(function(r){body.appendChild(r);});
  });
});
document.body.dataset.ready='1';
)js";

std::string Anchor(const Section& s, size_t index) { return fmt::format("s{}-{}", index, s.key); }

void RenderFacts(std::string& out, const std::vector<Fact>& facts) {
  if (facts.empty()) return;
  out += "<div class=\"facts\">";
  for (const Fact& f : facts) {
    fmt::format_to(std::back_inserter(out),
                   "<div class=\"fact\"><span>{}</span><span{}>{}</span></div>", XmlEscape(f.label),
                   f.unit == Unit::kText ? "" : " class=\"n\"",
                   XmlEscape(FormatValue(f.value, f.unit)));
  }
  out += "</div>";
}

void RenderTable(std::string& out, const Table& t) {
  if (!t.title.empty()) fmt::format_to(std::back_inserter(out), "<h3>{}</h3>", XmlEscape(t.title));
  fmt::format_to(std::back_inserter(out),
                 "<div class=\"tw\"><table class=\"sortable\" data-key=\"{}\"><thead><tr>",
                 XmlEscape(t.key));
  for (const Column& c : t.columns) {
    fmt::format_to(std::back_inserter(out), "<th class=\"{}\" title=\"{}\">{}</th>",
                   c.unit == Unit::kText ? "txt" : "num", XmlEscape(c.key), XmlEscape(c.title));
  }
  out += "</tr></thead><tbody>";
  for (const std::vector<Value>& row : t.rows) {
    out += "<tr>";
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Value v = c < row.size() ? row[c] : Value();
      if (t.columns[c].unit == Unit::kText) {
        fmt::format_to(std::back_inserter(out), "<td class=\"txt\">{}</td>",
                       XmlEscape(FormatValue(v, Unit::kText)));
      } else {
        fmt::format_to(std::back_inserter(out), "<td class=\"num\" data-v=\"{}\">{}</td>",
                       html::SortKey(v), XmlEscape(FormatValue(v, t.columns[c].unit)));
      }
    }
    out += "</tr>";
  }
  out += "</tbody></table></div>";
  if (t.total_rows > static_cast<int64_t>(t.rows.size())) {
    fmt::format_to(std::back_inserter(out),
                   "<p class=\"note\">{} more rows not shown (--top N shows more).</p>",
                   t.total_rows - static_cast<int64_t>(t.rows.size()));
  }
  if (!t.note.empty()) {
    fmt::format_to(std::back_inserter(out), "<p class=\"note\">{}</p>", XmlEscape(t.note));
  }
}

// Every section's time marks (iteration starts), per input: drawn on each chart over time of
// that input, whichever section holds the chart.
std::map<int, std::vector<html::Marker>> TimeMarksByInput(const Report& report) {
  std::map<int, std::vector<html::Marker>> marks;
  for (const Section& s : report.sections) {
    for (const TimeMark& m : s.time_marks) {
      marks[s.input].push_back({static_cast<double>(m.x_ns), m.label});
    }
  }
  return marks;
}

void RenderChartTitle(std::string& out, const std::string& title) {
  fmt::format_to(std::back_inserter(out), "<div class=\"ct\">{}</div>", XmlEscape(title));
}

// One series as a chart: distributions as a CDF, categories as bars, several lines with a legend,
// time-like x as a step line under the input's time marks, anything else as columns.
void RenderSeries(std::string& out, const Series& se, const std::vector<html::Marker>& marks) {
  if (se.x.empty()) return;
  RenderChartTitle(out, se.title);
  if (se.style == SeriesStyle::kCdf) {  // a distribution: the share at or below each value
    out += html::CdfChartSvg(se);
    out +=
        "<p class=\"note\">Cumulative: y% of the values are at or below x (log axis when "
        "they span more than a decade); dashed: p50, p90, p99.</p>";
    return;
  }
  if (!se.labels.empty()) {  // categories: a labelled bar each, in the series' order
    std::vector<html::Bar> bars;
    for (size_t i = 0; i < std::min(se.labels.size(), se.y.size()); ++i) {
      bars.push_back({se.labels[i], se.y[i]});
    }
    out += html::BarChartSvg(bars, se.y_unit);
    return;
  }
  const bool over_time = se.style == SeriesStyle::kOverTime || se.time_axis ||
                         (se.x_unit == Unit::kTimestampNs && se.x.size() > 1);
  const std::vector<html::Marker> no_marks;
  const std::vector<html::Marker>& markers = over_time ? marks : no_marks;
  if (!se.lines.empty()) {  // several lines, e.g. the sampled GPU metrics of one kind
    const std::vector<html::Marker>& line_markers =
        se.style == SeriesStyle::kOverTime ? marks : no_marks;
    out += html::LinesChartSvg(se, line_markers, se.y_unit == Unit::kPercent ? 100.0 : 0.0);
    bool band = false;
    for (const Series::Line& l : se.lines) band |= !l.band_max.empty();
    std::string note = band ? "Lines: the mean of each bucket; shaded: up to the largest value "
                              "in it; gaps: no data. "
                            : "";
    if (!line_markers.empty()) note += "Dashed lines: iteration starts.";
    if (!note.empty()) {
      fmt::format_to(std::back_inserter(out), "<p class=\"note\">{}</p>", XmlEscape(note));
    }
    return;
  }
  if (over_time) {
    out += html::StepChartSvg(se, markers, se.y_unit == Unit::kPercent ? 100.0 : 0.0);
    if (!markers.empty()) out += "<p class=\"note\">Dashed lines: iteration starts.</p>";
  } else {
    out += html::ColumnChartSvg(se);
  }
}

void RenderCharts(std::string& out, const std::vector<html::Marker>& marks, const Section& s) {
  for (const Series& se : s.charts) RenderSeries(out, se, marks);
  for (const Series& se : s.series) RenderSeries(out, se, marks);
}

// A graph (a TensorRT engine's layers) as a layered SVG drawing, scrollable when large.
void RenderGraph(std::string& out, const Graph& g) {
  if (g.nodes.empty()) return;
  std::vector<svg::DagNode> nodes;
  nodes.reserve(g.nodes.size());
  for (const GraphNode& n : g.nodes) {
    svg::DagNode& d = nodes.emplace_back();
    d.label = n.label;
    d.detail = n.detail;
    d.tooltip = n.tooltip;
    d.fill = svg::HeatRed(std::clamp(n.heat, 0.0, 1.0));
    d.terminal = n.terminal;
  }
  std::vector<svg::DagEdge> edges;
  edges.reserve(g.edges.size());
  for (const GraphEdge& e : g.edges) edges.push_back({e.from, e.to});
  RenderChartTitle(out, g.title);
  fmt::format_to(std::back_inserter(out),
                 "<div class=\"graph\" data-key=\"{}\" style=\"overflow:auto;max-height:900px\">{}"
                 "</div>",
                 XmlEscape(g.key), svg::DagSvg(nodes, edges));
  if (!g.note.empty()) {
    fmt::format_to(std::back_inserter(out), "<p class=\"note\">{}</p>", XmlEscape(g.note));
  }
}

// A timeline (the threads section's iterations) as lanes of bars, scrollable when wide.
void RenderTimeline(std::string& out, const Timeline& t) {
  if (t.lanes.empty()) return;
  auto fill = [](std::string_view kind) -> const char* {
    if (kind == "gpu") return "#59a14f";
    if (kind == "cuda_api") return "#4e79a7";
    if (kind == "nvtx") return "#b07aa1";
    if (kind == "gil_held") return "#f28e2b";
    if (kind == "gil_wait") return "#e15759";
    if (kind == "gc") return "#000000";
    if (kind == "os_wait") return "#9c755f";
    return "#bab0ac";
  };
  std::vector<svg::TimelineLane> lanes;
  for (const TimelineLane& l : t.lanes) {
    svg::TimelineLane& lane = lanes.emplace_back();
    lane.label = l.label;
    for (const TimelineSpan& sp : l.spans) {
      lane.bars.push_back({sp.start_ns, sp.end_ns, fill(sp.kind),
                           sp.label + " (" + FormatDuration(sp.end_ns - sp.start_ns) + ")"});
    }
  }
  RenderChartTitle(out, t.title);
  fmt::format_to(std::back_inserter(out),
                 "<div class=\"timeline\" data-key=\"{}\" style=\"overflow:auto\">{}</div>",
                 XmlEscape(t.key), svg::TimelineSvg(lanes, t.start_ns, t.end_ns));
  if (!t.note.empty()) {
    fmt::format_to(std::back_inserter(out), "<p class=\"note\">{}</p>", XmlEscape(t.note));
  }
}

// The first findings are open; the rest show their title line and open on a click.
constexpr size_t kOpenFindings = 3;

void RenderFindings(std::string& out, const Report& report) {
  out += "<section id=\"findings\"><h2>Findings</h2>";
  if (report.findings.empty()) {
    out += "<p class=\"note\">No findings.</p>";
  }
  for (size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    const char* sev = SeverityName(f.severity);
    fmt::format_to(std::back_inserter(out),
                   "<details class=\"finding {}\" data-id=\"{}\"{}><summary><h3><span "
                   "class=\"sev\">{}</span>{}. {} <span class=\"save\">({} ~{})</span></h3>"
                   "</summary>",
                   XmlEscape(sev), XmlEscape(f.id), i < kOpenFindings ? " open" : "",
                   XmlEscape(sev), i + 1, XmlEscape(f.title),
                   f.once_per_start ? "once per start" : "saves",
                   XmlEscape(FormatValue(Value(f.estimated_savings_ns), Unit::kDurationNs)));
    if (!f.where.empty()) {
      fmt::format_to(std::back_inserter(out), "<div class=\"note\">where: {}</div>",
                     XmlEscape(f.where));
    }
    RenderFacts(out, f.evidence);
    fmt::format_to(std::back_inserter(out), "<p class=\"fix\"><b>Fix:</b> {}</p></details>",
                   XmlEscape(f.recommendation));
  }
  out += "</section>";
}

void RenderDiagnostics(std::string& out, const Report& report) {
  bool any = false;
  for (const ReportInput& in : report.inputs) any |= !in.diagnostics.empty();
  if (!any) return;
  out += "<section id=\"diagnostics\" class=\"diag\"><h2>Diagnostics</h2>";
  for (const ReportInput& in : report.inputs) {
    if (in.diagnostics.empty()) continue;
    fmt::format_to(std::back_inserter(out),
                   "<h3>{} (data Sightline could not use)</h3><div class=\"tw\">"
                   "<table class=\"sortable\"><thead><tr><th class=\"num\">Count</th>"
                   "<th class=\"txt\">Severity</th><th class=\"txt\">Message</th>"
                   "<th class=\"txt\">Code</th></tr></thead><tbody>",
                   XmlEscape(in.label));
    for (const Diagnostic& d : in.diagnostics.items()) {
      const bool warn = d.severity() != DiagnosticSeverity::kInfo;
      fmt::format_to(std::back_inserter(out),
                     "<tr><td class=\"num\" data-v=\"{}\">{}</td><td class=\"txt{}\">{}</td>"
                     "<td class=\"txt\">{}</td><td class=\"txt\">{}</td></tr>",
                     d.count, XmlEscape(FormatValue(Value(d.count), Unit::kCount)),
                     warn ? " warn" : "", warn ? "warning" : "info", XmlEscape(d.text()),
                     XmlEscape(d.code()));
    }
    out += "</tbody></table></div>";
  }
  out += "</section>";
}

}  // namespace

std::string RenderHtmlReport(const Report& report) {
  std::string out;
  out.reserve(64 * 1024);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">";
  std::string title = "Sightline report";
  if (report.inputs.size() == 1) title += " — " + report.inputs[0].label;
  fmt::format_to(std::back_inserter(out), "<title>{}</title><style>{}</style></head><body>",
                 XmlEscape(title), kStyle);
  fmt::format_to(std::back_inserter(out), "<header><h1>{}</h1>", XmlEscape(title));
  for (size_t i = 0; i < report.inputs.size(); ++i) {
    const ReportInput& in = report.inputs[i];
    fmt::format_to(std::back_inserter(out), "<div class=\"inputs\">input {}: {} ({}{}{}{})</div>",
                   i, XmlEscape(in.path), XmlEscape(in.format),
                   in.format_version.empty() ? "" : " " + XmlEscape(in.format_version),
                   in.producer.empty() ? "" : ", " + XmlEscape(in.producer),
                   in.rank >= 0 ? fmt::format(", rank {}", in.rank) : "");
  }
  out += "</header><nav><a href=\"#findings\">Findings</a>";
  for (size_t i = 0; i < report.sections.size(); ++i) {
    const Section& s = report.sections[i];
    std::string label = s.title;
    if (report.inputs.size() > 1 && s.input >= 0) label += " (" + std::to_string(s.input) + ")";
    fmt::format_to(std::back_inserter(out), "<a href=\"#{}\">{}</a>", XmlEscape(Anchor(s, i)),
                   XmlEscape(label));
  }
  bool any_diag = false;
  for (const ReportInput& in : report.inputs) any_diag |= !in.diagnostics.empty();
  if (any_diag) out += "<a href=\"#diagnostics\">Diagnostics</a>";
  out += "</nav><main>";

  RenderFindings(out, report);
  const std::map<int, std::vector<html::Marker>> marks = TimeMarksByInput(report);
  const std::vector<html::Marker> no_marks;
  for (size_t i = 0; i < report.sections.size(); ++i) {
    const Section& s = report.sections[i];
    std::string title = s.title;
    if (report.inputs.size() > 1 && s.input >= 0 &&
        s.input < static_cast<int>(report.inputs.size())) {
      title += " — " + report.inputs[s.input].label;
    }
    fmt::format_to(std::back_inserter(out), "<section id=\"{}\" data-key=\"{}\"><h2>{}</h2>",
                   XmlEscape(Anchor(s, i)), XmlEscape(s.key), XmlEscape(title));
    RenderFacts(out, s.facts);
    const auto input_marks = marks.find(s.input);
    RenderCharts(out, input_marks != marks.end() ? input_marks->second : no_marks, s);
    for (const Graph& g : s.graphs) RenderGraph(out, g);
    for (const Timeline& t : s.timelines) RenderTimeline(out, t);
    for (const Table& t : s.tables) RenderTable(out, t);
    for (const std::string& n : s.notes) {
      fmt::format_to(std::back_inserter(out), "<p class=\"note\">{}</p>", XmlEscape(n));
    }
    out += "</section>";
  }
  RenderDiagnostics(out, report);
  fmt::format_to(std::back_inserter(out),
                 "</main><footer>Sightline {} · self-contained report (no network access)"
                 "</footer><script>{}</script></body></html>\n",
                 XmlEscape(report.tool_version), kScript);
  return out;
}

}  // namespace sightline
