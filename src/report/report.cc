#include "report/report.h"

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

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kLow:
      return "low";
    case Severity::kMedium:
      return "medium";
    case Severity::kHigh:
      return "high";
  }
  return "medium";
}

Section& Report::AddSection(std::string key, std::string title, int input) {
  Section& s = sections.emplace_back();
  s.key = std::move(key);
  s.title = std::move(title);
  s.input = input;
  return s;
}

}  // namespace sightline
