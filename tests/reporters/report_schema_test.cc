// Tests for the Report's description of itself (report/report_schema.h): every member of every
// report struct is described (a field added to report.h without a Describe line fails here), the
// codec carries every described field (a report filled field by field survives a round trip), and
// the generated field list in docs/formats/report-json.md is the one the description gives.
#include "report/report_schema.h"

#include <fmt/format.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "report/report_codec.h"
#include "report/report_doc.h"
#include "reporters/reporter.h"
#include "testing/files.h"

namespace sightline {
namespace {

// The number of members of an aggregate: the most initializers `T{...}` takes (each converts to
// anything, so that no member's type matters).
struct AnyMember {
  template <class T>
  operator T() const;  // NOLINT: implicit on purpose; never defined (unevaluated use only)
};

template <class T, class... A>
constexpr size_t MemberCount() {
  if constexpr (requires { T{A{}..., AnyMember{}}; }) {
    return MemberCount<T, A..., AnyMember>();
  } else {
    return sizeof...(A);
  }
}

struct CountProbe {
  int a;
  std::string b;
  Value c;
  std::deque<Table> d;
  RunInfo e;
};
static_assert(MemberCount<CountProbe>() == 5);
static_assert(MemberCount<Series::Mark>() == 3);

// The Fields of one struct's description (Object's fields belong to the struct that holds them).
class FieldCount : public FieldsOnly<FieldCount> {
 public:
  template <class T>
  void Field(const char*, T&, const FieldOptions& = {}) {
    ++n;
  }
  size_t n = 0;
};

// Walks every type reachable from the Report, checking each described struct's fields against
// its members.
class EveryStruct : public FieldsOnly<EveryStruct> {
 public:
  template <class T>
  void Field(const char*, T&, const FieldOptions& = {}) {
    Visit<T>();
  }

  template <class T>
  void Visit() {
    if constexpr (ListType<T>) {
      Visit<typename ListTraits<T>::Element>();
    } else if constexpr (Described<T>) {
      const std::string name = typeid(T).name();
      for (const std::string& s : seen) {
        if (s == name) return;
      }
      seen.push_back(name);
      T x{};
      FieldCount count;
      Describe(count, x);
      EXPECT_EQ(count.n, MemberCount<T>())
          << name << ": a member not described in report_schema.h (or described twice)";
      Describe(*this, x);
    }
  }
  std::vector<std::string> seen;
};

TEST(ReportSchema, EveryMemberOfEveryStructIsDescribed) {
  EveryStruct walk;
  walk.Visit<Report>();
  // Report, RunInfo, ReportInput, Diagnostic, InputFile, Section, Fact, Table, Column, Series,
  // Line, Mark, Graph, GraphNode, GraphEdge, Timeline, TimelineLane, TimelineSpan, Finding,
  // FindingSpan, GateVerdict, TimeMark.
  EXPECT_EQ(walk.seen.size(), 22u);
}

// The check itself: a struct with a member its description leaves out is reported.
struct HalfDescribed {
  std::string a;
  int64_t b = 0;
};
template <class V, Is<HalfDescribed> T>
void Describe(V& v, T& x) {
  v.Field("a", x.a);
}

TEST(ReportSchema, AMemberLeftOutIsReported) {
  EXPECT_NONFATAL_FAILURE(EveryStruct().Visit<HalfDescribed>(), "a member not described");
}

// Sets every described field to a value of its own (no field keeps its default): strings, numbers
// and enums differ field by field, every list has two elements.
class Filler : public FieldsOnly<Filler> {
 public:
  template <class T>
  void Field(const char*, T& x, const FieldOptions& = {}) {
    Fill(x);
  }

  template <class T>
  void Fill(T& x) {
    ++n_;
    if constexpr (std::is_same_v<T, std::string>) {
      x = fmt::format("s{}", n_);
    } else if constexpr (std::is_same_v<T, bool>) {
      x = true;
    } else if constexpr (std::is_enum_v<T>) {
      x = static_cast<T>(EnumNames<T>::Names().size() - 1 - n_ % 2);
    } else if constexpr (std::is_integral_v<T>) {
      x = static_cast<T>(n_);
    } else if constexpr (std::is_floating_point_v<T>) {
      x = n_ + 0.1;
    } else if constexpr (std::is_same_v<T, Value>) {
      if (n_ % 3 == 0) x = int64_t{-n_};
      if (n_ % 3 == 1) x = n_ / 3.0;
      if (n_ % 3 == 2) x = fmt::format("v{}", n_);
    } else if constexpr (ListType<T>) {
      for (int i = 0; i < 2; ++i) {
        typename ListTraits<T>::Element e{};
        Fill(e);
        ListTraits<T>::Append(x, std::move(e));
      }
    } else {
      Describe(*this, x);
    }
  }

 private:
  int n_ = 0;
};

// Every described field as "path=value" (doubles exact), for comparing two reports field by field.
class Flatten : public FieldsOnly<Flatten> {
 public:
  template <class T>
  void Field(const char* name, const T& x, const FieldOptions& = {}) {
    const std::string outer = path_;
    path_ += std::string(".") + name;
    Add(x);
    path_ = outer;
  }

  template <class T>
  void Add(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
      out.push_back(path_ + "=" + x);
    } else if constexpr (std::is_enum_v<T>) {
      out.push_back(fmt::format("{}={}", path_, static_cast<int64_t>(x)));
    } else if constexpr (std::is_floating_point_v<T>) {
      out.push_back(fmt::format("{}={:a}", path_, x));
    } else if constexpr (std::is_arithmetic_v<T>) {
      out.push_back(fmt::format("{}={}", path_, x));
    } else if constexpr (std::is_same_v<T, Value>) {
      out.push_back(fmt::format("{}#{}", path_, x.index()));
      std::visit(
          [&](const auto& v) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) Add(v);
          },
          x);
    } else if constexpr (ListType<T>) {
      size_t i = 0;
      for (const auto& e : ListTraits<T>::Items(x)) {
        const std::string outer = path_;
        path_ += fmt::format("[{}]", i++);
        Add(e);
        path_ = outer;
      }
      out.push_back(fmt::format("{}.size={}", path_, i));
    } else {
      Describe(*this, x);
    }
  }

  std::vector<std::string> out;

 private:
  std::string path_;
};

template <class T>
std::vector<std::string> Fields(const T& x) {
  Flatten f;
  f.Add(x);
  return f.out;
}

TEST(ReportSchema, CodecCarriesEveryField) {
  Report report;
  Filler().Fill(report);
  const std::vector<std::string> fields = Fields(report);
  ASSERT_GT(fields.size(), 300u);
  ASSERT_EQ(report.inputs.at(0).diagnostics.items().size(), 2u);

  ByteWriter w;
  EncodeReport(report, w);
  ByteReader r(w.bytes());
  const Report back = DecodeReport(r);
  ASSERT_TRUE(r.Finish("test").ok());
  EXPECT_EQ(Fields(back), fields);
  EXPECT_EQ(RenderJsonReport(back), RenderJsonReport(report));

  // The parts one rank ships (pipeline/rank_parts.cc).
  ByteWriter parts;
  EncodeReportInput(report.inputs[1], parts);
  EncodeSection(report.sections[1], parts);
  EncodeFinding(report.findings[1], parts);
  ByteReader pr(parts.bytes());
  EXPECT_EQ(Fields(DecodeReportInput(pr)), Fields(report.inputs[1]));
  EXPECT_EQ(Fields(DecodeSection(pr)), Fields(report.sections[1]));
  EXPECT_EQ(Fields(DecodeFinding(pr)), Fields(report.findings[1]));
  EXPECT_TRUE(pr.Finish("parts").ok());

  // Cut short anywhere, or an enum this build does not know: refused, no crash.
  for (size_t n = 0; n < w.bytes().size(); n += 1 + n / 8) {
    ByteReader cut(std::string_view(w.bytes()).substr(0, n));
    DecodeReport(cut);
    EXPECT_FALSE(cut.Finish("cut").ok()) << n;
  }
  ByteWriter bad;
  Finding f;
  EncodeFinding(f, bad);
  bad.bytes()[sizeof(uint64_t) + f.id.size()] = 7;  // severity, just after the id
  ByteReader br(bad.bytes());
  DecodeFinding(br);
  EXPECT_FALSE(br.Finish("bad severity").ok());
}

using testing::Slurp;

TEST(ReportSchema, FormatDocListsTheDescribedFields) {
  const std::string path = std::string(SIGHTLINE_SOURCE_DIR) + "/docs/formats/report-json.md";
  std::string doc = Slurp(path);
  const size_t begin = doc.find(kReportFieldsBegin);
  const size_t end = doc.find(kReportFieldsEnd);
  ASSERT_NE(begin, std::string::npos) << path << " has no " << kReportFieldsBegin;
  ASSERT_NE(end, std::string::npos) << path << " has no " << kReportFieldsEnd;
  const size_t from = begin + std::string_view(kReportFieldsBegin).size();
  const std::string generated = "\n" + RenderReportFieldsDoc();
  if (std::getenv("SIGHTLINE_UPDATE_DOCS") != nullptr) {
    doc.replace(from, end - from, generated);
    std::ofstream(path, std::ios::binary) << doc;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(doc.substr(from, end - from), generated)
      << path << " is out of date: run with SIGHTLINE_UPDATE_DOCS=1 to regenerate its field list";
}

}  // namespace
}  // namespace sightline
