// Names come from input files and may hold any bytes. Whatever a kernel or range is called, the
// text report cannot act on the user's terminal (no escape sequence, no carriage return, one line
// per table row), and the text, HTML and JSON reports stay well-formed UTF-8 (docs/reliability.md,
// "Values from the input").
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "analyses/common/analysis_context.h"
#include "base/utf8.h"
#include "pipeline/pipeline.h"
#include "reporters/reporter.h"
#include "testing/trace_fixtures.h"

namespace sightline {
namespace {

using testing::TraceFixture;

// A terminal escape that turns text red and clears the screen, a line break, NUL, a bidi override,
// bytes that are not UTF-8, and a long name of two-byte characters that the text report must cut.
const std::string kNames[] = {
    std::string("gemm\x1b[31m\x1b[2J red\r\nsecond line\t") + std::string(1, '\0') + "nul",
    "attn_\xe2\x80\xae"
    "dlrow_\xff\xfe_\xc0\x80_\xed\xa0\x80",
    [] {
      std::string s = "long_";
      for (int i = 0; i < 200; ++i) s += "\xc3\xa9";  // e-acute
      return s;
    }(),
};

// Every byte sequence of `s` is well-formed UTF-8, and no control but those `allowed` is in it.
void ExpectCleanUtf8(std::string_view what, const std::string& s, std::string_view allowed) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Char u = DecodeUtf8(s, i);
    ASSERT_GT(u.length, 0u) << what << ": not UTF-8 at byte " << i << ": "
                            << s.substr(i > 40 ? i - 40 : 0, 80);
    if (IsControlCodePoint(u.code_point)) {
      ASSERT_NE(allowed.find(static_cast<char>(u.code_point)), std::string_view::npos)
          << what << ": control U+" << std::hex << static_cast<uint32_t>(u.code_point)
          << " at byte " << std::dec << i;
    }
    i += u.length;
  }
}

Report HostileReport() {
  TraceFixture f;
  f.Device(0);
  TimeNs t = 0;
  for (const std::string& name : kNames) {
    f.Range(name, t, t + 900);
    f.Launch(name, t, t + 5, t + 10, t + 400);
    f.Launch(name, t + 400, t + 405, t + 410, t + 800);
    t += 1'000;
  }
  const Trace trace = f.Build();
  AnalysisContext c(trace);
  Report report;
  const Status s = AnalyzeTrace(c, "hostile", report, 1);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return report;
}

TEST(HostileNames, TheTextReportShowsControlsAndStaysOneLinePerRow) {
  const Report report = HostileReport();
  // Wide enough for whole names: each is shown with its controls as escapes, on its row's line.
  const std::string wide = RenderTextReport(report, {.width = 1000});
  ExpectCleanUtf8("text", wide, "\n");
  EXPECT_NE(wide.find("  gemm\\x1b[31m\\x1b[2J red\\r\\nsecond line\\t\\x00nul\n"),
            std::string::npos)
      << wide;
  EXPECT_NE(wide.find("attn_\\u202edlrow_\\xff\\xfe_\\xc0\\x80_\\xed\\xa0\\x80\n"),
            std::string::npos);
  // Fitted to 100 columns, names are cut between characters, and the columns stay aligned: the
  // first lines holding the long name and the gemm name (their rows of the kernels table, where
  // both are cut) are as long in characters.
  const std::string narrow = RenderTextReport(report, {.width = 100});
  ExpectCleanUtf8("text", narrow, "\n");
  const size_t long_row = narrow.find("long_\xc3\xa9");
  ASSERT_NE(long_row, std::string::npos);
  const size_t row_start = narrow.rfind('\n', long_row) + 1;
  const std::string row = narrow.substr(row_start, narrow.find('\n', long_row) - row_start);
  const size_t gemm_row = narrow.find("gemm\\x1b");
  ASSERT_NE(gemm_row, std::string::npos);
  const size_t gemm_start = narrow.rfind('\n', gemm_row) + 1;
  const std::string other = narrow.substr(gemm_start, narrow.find('\n', gemm_row) - gemm_start);
  auto columns = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  EXPECT_EQ(columns(row), columns(other)) << row << "\n" << other;
}

TEST(HostileNames, HtmlAndJsonReportsAreWellFormedUtf8) {
  const Report report = HostileReport();
  ExpectCleanUtf8("html", RenderHtmlReport(report), "\n\t");
  const std::string json = RenderJsonReport(report);
  ExpectCleanUtf8("json", json, "\n");
  EXPECT_NE(json.find("gemm\\u001b[31m"), std::string::npos);  // JSON's own escape, the name kept
}

}  // namespace
}  // namespace sightline
