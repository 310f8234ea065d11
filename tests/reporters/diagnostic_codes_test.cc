// Tests for the diagnostic catalogue (model/diagnostic_codes.h), Diagnostics (model/diagnostics.h)
// and docs/diagnostics.md, which must list exactly the catalogue.
#include "model/diagnostic_codes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "model/diagnostics.h"
#include "report/report.h"
#include "reporters/reporter.h"

namespace sightline {
namespace {

std::string SeverityName(DiagnosticSeverity s) {
  return s == DiagnosticSeverity::kInfo ? "info" : "warning";
}

TEST(DiagnosticCatalogue, EntriesAreCompleteAndUnique) {
  const std::regex snake_case("[a-z][a-z0-9]*(_[a-z0-9]+)*");
  std::set<std::string> codes;
  ASSERT_FALSE(DiagnosticCatalogue().empty());
  for (const DiagnosticInfo& info : DiagnosticCatalogue()) {
    const std::string code(info.code);
    // The one exception keeps Kineto's category name "Trace", as reports have always written it.
    if (info.id != DiagCode::kKinetoUnmappedTrace) {
      EXPECT_TRUE(std::regex_match(code, snake_case)) << code;
    }
    EXPECT_TRUE(codes.insert(code).second) << "duplicate code " << code;
    EXPECT_FALSE(info.message.empty()) << code;
    EXPECT_EQ(&Info(info.id), &info) << code;  // Info() finds every entry
  }
}

// The code and severity columns of every table row in docs/diagnostics.md.
std::map<std::string, std::string> DocumentedCodes() {
  std::ifstream f(std::string(SIGHTLINE_SOURCE_DIR) + "/docs/diagnostics.md");
  EXPECT_TRUE(f.good()) << "docs/diagnostics.md not found";
  const std::regex row(R"(^\| `([^`]+)` \| (\w+) \|.*)");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      EXPECT_TRUE(out.emplace(m[1], m[2]).second) << "listed twice: " << m[1];
    }
  }
  return out;
}

TEST(DiagnosticCatalogue, DocsListExactlyTheCatalogue) {
  const std::map<std::string, std::string> documented = DocumentedCodes();
  for (const DiagnosticInfo& info : DiagnosticCatalogue()) {
    auto it = documented.find(std::string(info.code));
    if (it == documented.end()) {
      ADD_FAILURE() << info.code << " is in the catalogue but not in docs/diagnostics.md";
      continue;
    }
    EXPECT_EQ(it->second, SeverityName(info.severity)) << info.code;
  }
  for (const auto& [code, severity] : documented) {
    bool found = false;
    for (const DiagnosticInfo& info : DiagnosticCatalogue()) found |= info.code == code;
    EXPECT_TRUE(found) << code << " is in docs/diagnostics.md but not in the catalogue";
  }
}

TEST(Diagnostics, CountsByCodeAndDetail) {
  Diagnostics d;
  d.Add(DiagCode::kKernelWithoutLaunch, 0);  // nothing to report: no entry
  EXPECT_TRUE(d.empty());
  d.Add(DiagCode::kKernelWithoutLaunch, 2);
  d.Add(DiagCode::kKinetoUnmappedCategory, 1, "category 'a'");
  d.Add(DiagCode::kKernelWithoutLaunch);
  d.Add(DiagCode::kKinetoUnmappedCategory, 4, "category 'b'");
  d.Add(DiagCode::kKinetoUnmappedCategory, 1, "category 'a'");
  ASSERT_EQ(d.items().size(), 3u);  // one per (code, detail), in order of first use
  EXPECT_EQ(d.items()[0].count, 3);
  EXPECT_EQ(d.items()[1].detail, "category 'a'");
  EXPECT_EQ(d.items()[1].count, 2);
  EXPECT_EQ(d.Count(DiagCode::kKernelWithoutLaunch), 3);
  EXPECT_EQ(d.Count(DiagCode::kKinetoUnmappedCategory), 6);  // summed over details
  EXPECT_EQ(d.Count(DiagCode::kNegativeDuration), 0);

  EXPECT_EQ(d.items()[0].code(), "kernel_without_launch");
  EXPECT_EQ(d.items()[0].severity(), DiagnosticSeverity::kWarning);
  EXPECT_EQ(d.items()[0].text(), d.items()[0].message());
  EXPECT_EQ(d.items()[1].text(),
            std::string(Info(DiagCode::kKinetoUnmappedCategory).message) + " (category 'a')");

  Diagnostics other;
  other.Add(DiagCode::kKinetoUnmappedCategory, 5, "category 'b'");
  other.Add(DiagCode::kRangeNotNested, 7);
  d.Merge(other);
  ASSERT_EQ(d.items().size(), 4u);
  EXPECT_EQ(d.items()[2].count, 9);
  EXPECT_EQ(d.Count(DiagCode::kRangeNotNested), 7);
}

TEST(Diagnostics, JsonHasDetailOnlyWhenThereIsOne) {
  Report r;
  ReportInput& in = r.inputs.emplace_back();
  in.diagnostics.Add(DiagCode::kRangeNotNested, 2);
  in.diagnostics.Add(DiagCode::kRecorderTruncatedChunks, 1, "12 bytes not read");
  const std::string json = RenderJsonReport(r);
  EXPECT_NE(json.find("\"detail\": \"12 bytes not read\""), std::string::npos) << json;
  const size_t first = json.find("\"code\": \"range_not_nested\"");
  const size_t second = json.find("\"code\": \"recorder_truncated_chunks\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_EQ(json.substr(first, second - first).find("\"detail\""), std::string::npos);
}

}  // namespace
}  // namespace sightline
