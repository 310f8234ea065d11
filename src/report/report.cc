#include "report/report.h"

#include <algorithm>
#include <map>

#include "report/report_schema.h"

namespace sightline {

Fact& Section::AddFact(std::string key, std::string label, Value value, Unit unit) {
  return facts.emplace_back(Fact{std::move(key), std::move(label), std::move(value), unit});
}

Table& Section::AddTable(std::string key, std::string title, std::vector<Column> columns) {
  Table& t = tables.emplace_back();
  t.key = std::move(key);
  t.title = std::move(title);
  t.columns = std::move(columns);
  return t;
}

Series& Section::AddBarChart(std::string key, std::string title, Unit unit,
                             const std::vector<std::pair<std::string, double>>& bars) {
  Series& c = charts.emplace_back();
  c.key = std::move(key);
  c.title = std::move(title);
  c.y_unit = unit;
  for (const auto& [label, value] : bars) {
    c.x.push_back(static_cast<double>(c.labels.size()));
    c.labels.push_back(label);
    c.y.push_back(value);
  }
  return c;
}

std::vector<std::pair<std::string, double>> SumsLargestFirst(
    const std::vector<std::pair<std::string, double>>& values) {
  std::map<std::string, double> sums;
  for (const auto& [label, value] : values) sums[label] += value;
  std::vector<std::pair<std::string, double>> bars;
  for (const auto& [label, sum] : sums) {
    if (sum > 0) bars.emplace_back(label, sum);
  }
  std::stable_sort(bars.begin(), bars.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return bars;
}

const char* SeverityName(Severity s) {
  const auto names = EnumNames<Severity>::Names();
  const auto i = static_cast<size_t>(s);
  return i < names.size() ? names[i].data() : "medium";  // the names are literals
}

void Finding::AddSpan(TimeNs start_ns, TimeNs end_ns, int32_t device) {
  if (end_ns < start_ns) return;
  const FindingSpan span{start_ns, end_ns, device};
  if (spans.size() < kMaxSpans) {
    spans.push_back(span);
    return;
  }
  auto shortest = std::min_element(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a.end_ns - a.start_ns < b.end_ns - b.start_ns;
  });
  if (shortest->end_ns - shortest->start_ns < end_ns - start_ns) *shortest = span;
}

void Finding::SortSpans() {
  std::sort(spans.begin(), spans.end(), [](const FindingSpan& a, const FindingSpan& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
}

Section& Report::AddSection(std::string key, std::string title, int input) {
  Section& s = sections.emplace_back();
  s.key = std::move(key);
  s.title = std::move(title);
  s.input = input;
  return s;
}

}  // namespace sightline
