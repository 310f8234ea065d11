// UTF-8 for outputs (base/utf8.h): strict decoding, controls shown as escapes, prefixes that do not
// end inside a character; and the JSON writer's replacement of what is not UTF-8.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "base/json_writer.h"

namespace sightline {
namespace {

TEST(Utf8, DecodesOnlyWellFormedSequences) {
  EXPECT_EQ(DecodeUtf8("a", 0).length, 1u);
  EXPECT_EQ(DecodeUtf8("\xc3\xa9", 0).code_point, U'\u00e9');
  EXPECT_EQ(DecodeUtf8("\xe2\x80\xae", 0).code_point, U'\u202e');
  EXPECT_EQ(DecodeUtf8("\xf0\x9f\x98\x80", 0).length, 4u);
  for (const char* bad : {
           "\xc0\x80",          // overlong NUL
           "\xe0\x80\xaf",      // overlong '/'
           "\xed\xa0\x80",      // a surrogate (U+D800)
           "\xf4\x90\x80\x80",  // above U+10FFFF
           "\xf8\x88\x80\x80",  // a five-byte form
           "\x80",              // a lone continuation byte
           "\xe2\x80",          // cut short
           "\xc3\x28",          // a continuation byte missing
       }) {
    EXPECT_EQ(DecodeUtf8(bad, 0).length, 0u) << testing::PrintToString(std::string(bad));
  }
}

TEST(Utf8, ControlsAndBrokenBytesAreShownAsEscapes) {
  EXPECT_EQ(PrintableText("gemm_128x128 \xc3\xa9t\xc3\xa9"), "gemm_128x128 \xc3\xa9t\xc3\xa9");
  EXPECT_EQ(PrintableText(std::string("a\x1b[31mb\n\t\r", 10) + std::string(1, '\0') + "\x7f"),
            "a\\x1b[31mb\\n\\t\\r\\x00\\x7f");
  EXPECT_EQ(PrintableText("x\xc2\x85y\xe2\x80\xaez\xe2\x81\xa6"), "x\\u0085y\\u202ez\\u2066");
  EXPECT_EQ(PrintableText("ok\xff\xed\xa0\x80"), "ok\\xff\\xed\\xa0\\x80");
  EXPECT_EQ(PrintableText("two\nlines\tand\x1b", /*keep_line_breaks=*/true),
            "two\nlines\tand\\x1b");
}

TEST(Utf8, PrefixesDoNotEndInsideACharacter) {
  const std::string s = "a\xc3\xa9\xe2\x82\xac";  // a, e-acute (2 bytes), euro sign (3 bytes)
  EXPECT_EQ(Utf8PrefixLength(s, 1), 1u);
  EXPECT_EQ(Utf8PrefixLength(s, 2), 1u);
  EXPECT_EQ(Utf8PrefixLength(s, 3), 3u);
  EXPECT_EQ(Utf8PrefixLength(s, 5), 3u);
  EXPECT_EQ(Utf8PrefixLength(s, 6), 6u);
  EXPECT_EQ(Utf8PrefixLength(s, 100), 6u);
}

// Overlong forms and surrogates passed the writer's old check, and Python's json module then
// refused the whole report.
TEST(Utf8, JsonStringsAreAlwaysUtf8) {
  JsonWriter w(0);
  w.String("\xc0\x80|\xed\xa0\x80|\xc3\xa9|\x1b");
  EXPECT_EQ(w.str(),
            "\"\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xc3\xa9|\\u001b\"");
}

}  // namespace
}  // namespace sightline
