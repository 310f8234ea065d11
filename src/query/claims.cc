// The report's numbers and the matching of claims to them (claims.h).
#include "query/claims.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/strings.h"

namespace sightline {
namespace {

// The words of a key, label or title, lower-case, without the unit suffixes.
void AddWords(std::string_view s, std::vector<std::string>& words) {
  static const std::set<std::string> kSkip = {"ns",  "pct", "bytes", "gbps", "the", "of", "in",
                                              "per", "by",  "and",   "to",   "a",   "on", "at"};
  std::string w;
  for (size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ' ';
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9' && !w.empty())) {
      w += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else {
      if (w.size() > 1 && !kSkip.contains(w) &&
          std::find(words.begin(), words.end(), w) == words.end()) {
        words.push_back(w);
      }
      w.clear();
    }
  }
}

// The dimension a key's suffix or a column's unit says.
bool DimensionOfUnit(std::string_view unit, Dimension* d) {
  if (unit == "ns")
    *d = Dimension::kTime;
  else if (unit == "percent")
    *d = Dimension::kPercent;
  else if (unit == "bytes")
    *d = Dimension::kBytes;
  else if (unit == "GB/s")
    *d = Dimension::kBandwidth;
  else if (unit == "ratio")
    *d = Dimension::kRatio;
  else if (unit == "count" || unit == "number")
    *d = Dimension::kCount;
  else
    return false;  // text, timestamp_ns (absolute times: not claims' numbers)
  return true;
}

Dimension DimensionOfKey(std::string_view key) {
  if (EndsWith(key, "_ns")) return Dimension::kTime;
  if (EndsWith(key, "_pct") || EndsWith(key, "_percent")) return Dimension::kPercent;
  if (EndsWith(key, "_bytes")) return Dimension::kBytes;
  if (EndsWith(key, "_gbps")) return Dimension::kBandwidth;
  if (EndsWith(key, "_ratio") || EndsWith(key, "_x")) return Dimension::kRatio;
  return Dimension::kCount;
}

bool NumberOf(const simdjson::dom::element& e, double* v) {
  switch (e.type()) {
    case simdjson::dom::element_type::INT64:
      *v = static_cast<double>(int64_t(e));
      return true;
    case simdjson::dom::element_type::UINT64:
      *v = static_cast<double>(uint64_t(e));
      return true;
    case simdjson::dom::element_type::DOUBLE:
      *v = double(e);
      return std::isfinite(*v);
    default:
      return false;
  }
}

ReportNumber Exact(Dimension dim, double v, std::string source) {
  ReportNumber n;
  n.q.dim = dim;
  n.q.value = n.q.lo = n.q.hi = v;
  n.source = std::move(source);
  return n;
}

// The numbers written in a string of the report (a title, a note), each with its rounding.
void AddTextNumbers(std::string_view text, const std::string& source,
                    const std::vector<std::string>& words, std::vector<ReportNumber>& out) {
  for (const Quantity& q : NumbersIn(text)) {
    ReportNumber n;
    n.q = q;
    n.source = source;
    n.words = words;
    n.from_text = true;
    out.push_back(std::move(n));
  }
}

std::string_view Str(simdjson::simdjson_result<simdjson::dom::element> e) {
  std::string_view s;
  return e.get(s) == simdjson::SUCCESS ? s : std::string_view();
}

std::string_view Str(const simdjson::dom::element& e) {
  std::string_view s;
  return e.get(s) == simdjson::SUCCESS ? s : std::string_view();
}

bool NumberOf(simdjson::simdjson_result<simdjson::dom::element> r, double* v) {
  simdjson::dom::element e;
  return r.get(e) == simdjson::SUCCESS && NumberOf(e, v);
}

}  // namespace

StatusOr<std::vector<ReportNumber>> ReportNumbers(std::string_view json, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array sections;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
      doc["sections"].get(sections) != simdjson::SUCCESS) {
    return InvalidInputError(fmt::format(
        "{}: not a report in JSON (write one with `sightline analyze TRACE --format json -o "
        "REPORT.json`)",
        path));
  }
  std::vector<ReportNumber> out;
  for (simdjson::dom::element s : sections) {
    const std::string key(Str(s["key"]));
    int64_t input = -1;
    const bool has_input = s["input"].get(input) == simdjson::SUCCESS;
    const std::string where = has_input ? fmt::format("section {} (input {})", key, input)
                                        : fmt::format("section {}", key);
    simdjson::dom::object facts;
    if (s["facts"].get(facts) == simdjson::SUCCESS) {
      for (auto f : facts) {
        double v = 0;
        if (!NumberOf(f.value, &v)) continue;
        ReportNumber n = Exact(DimensionOfKey(f.key), v, fmt::format("{}, fact {}", where, f.key));
        AddWords(f.key, n.key_words);
        AddWords(key, n.words);
        out.push_back(std::move(n));
      }
    }
    simdjson::dom::object tables;
    if (s["tables"].get(tables) == simdjson::SUCCESS) {
      for (auto t : tables) {
        const std::string table(t.key);
        simdjson::dom::array columns, rows;
        if (t.value["columns"].get(columns) != simdjson::SUCCESS ||
            t.value["rows"].get(rows) != simdjson::SUCCESS) {
          continue;
        }
        size_t r = 0;
        for (simdjson::dom::element row : rows) {
          std::vector<std::string> names;
          std::string first_name;  // the row's name column, else its first text
          for (simdjson::dom::element c : columns) {
            simdjson::dom::element cell;
            const std::string_view ckey = Str(c["key"]);
            if (row[ckey].get(cell) != simdjson::SUCCESS) continue;
            const std::string_view text = Str(cell);
            if (text.size() < 3) continue;
            names.push_back(Lower(text));
            if (first_name.empty() || ckey == "name") first_name = std::string(text.substr(0, 60));
          }
          for (simdjson::dom::element c : columns) {
            const std::string_view ckey = Str(c["key"]);
            Dimension dim;
            simdjson::dom::element cell;
            double v = 0;
            if (!DimensionOfUnit(Str(c["unit"]), &dim) ||
                row[ckey].get(cell) != simdjson::SUCCESS || !NumberOf(cell, &v)) {
              continue;
            }
            ReportNumber n =
                Exact(dim, v,
                      fmt::format("{}, table {}, row {}{}, column {}", where, table, r,
                                  first_name.empty() ? "" : " (" + first_name + ")", ckey));
            AddWords(ckey, n.key_words);
            AddWords(Str(c["title"]), n.key_words);
            AddWords(table, n.words);
            AddWords(key, n.words);
            n.names = names;
            out.push_back(std::move(n));
          }
          ++r;
        }
      }
    }
    simdjson::dom::array notes;
    if (s["notes"].get(notes) == simdjson::SUCCESS) {
      size_t i = 0;
      for (simdjson::dom::element note : notes) {
        std::vector<std::string> words;
        AddWords(key, words);
        AddTextNumbers(Str(note), fmt::format("{}, note {}", where, i++), words, out);
      }
    }
  }
  simdjson::dom::array findings;
  if (doc["findings"].get(findings) == simdjson::SUCCESS) {
    size_t i = 0;
    for (simdjson::dom::element f : findings) {
      const std::string id(Str(f["id"]));
      const std::string where = fmt::format("finding {} ({})", i++, id);
      std::vector<std::string> words;
      AddWords(id, words);
      for (const char* field : {"title", "where", "recommendation"}) {
        AddTextNumbers(Str(f[field]), fmt::format("{}, {}", where, field), words, out);
      }
      simdjson::dom::object evidence;
      if (f["evidence"].get(evidence) == simdjson::SUCCESS) {
        for (auto e : evidence) {
          double v = 0;
          if (!NumberOf(e.value, &v)) continue;
          ReportNumber n =
              Exact(DimensionOfKey(e.key), v, fmt::format("{}, evidence {}", where, e.key));
          AddWords(e.key, n.key_words);
          for (const std::string& w : words) n.words.push_back(w);
          out.push_back(std::move(n));
        }
      }
      double savings = 0;
      if (NumberOf(f["estimated_savings_ns"], &savings)) {
        ReportNumber n =
            Exact(Dimension::kTime, savings, fmt::format("{}, estimated_savings_ns", where));
        AddWords("estimated savings", n.key_words);
        for (const std::string& w : words) n.words.push_back(w);
        out.push_back(std::move(n));
      }
    }
  }
  return out;
}

StatusOr<std::vector<ReportNumber>> QueryResultNumbers(std::string_view json,
                                                       const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array columns, rows;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS ||
      doc["columns"].get(columns) != simdjson::SUCCESS ||
      doc["rows"].get(rows) != simdjson::SUCCESS) {
    return InvalidInputError(fmt::format(
        "{}: not a query result in JSON (write one with `sightline query ... --format json`)",
        path));
  }
  std::vector<std::string> keys;
  for (simdjson::dom::element c : columns) keys.emplace_back(Str(c));
  std::vector<ReportNumber> out;
  size_t r = 0;
  for (simdjson::dom::element row_element : rows) {
    simdjson::dom::array row;
    if (row_element.get_array().get(row) != simdjson::SUCCESS) continue;
    std::vector<std::string> names;
    size_t c = 0;
    for (simdjson::dom::element cell : row) {
      if (Str(cell).size() >= 3) names.push_back(Lower(Str(cell)));
      ++c;
    }
    c = 0;
    for (simdjson::dom::element cell : row) {
      double v = 0;
      const std::string key = c < keys.size() ? keys[c] : std::to_string(c);
      ++c;
      if (!NumberOf(cell, &v)) continue;
      ReportNumber n = Exact(DimensionOfKey(key), v,
                             fmt::format("query result {}, row {}, column {}", path, r, key));
      AddWords(key, n.key_words);
      n.names = names;
      out.push_back(std::move(n));
    }
    ++r;
  }
  return out;
}

// A number of the report is about what a claim speaks of from this score on (a key word and a
// section word, or its row's name).
constexpr int kAboutTheSameThing = 3;

std::vector<ClaimCheck> CheckClaims(const std::vector<Claim>& claims,
                                    const std::vector<ReportNumber>& numbers) {
  std::vector<ClaimCheck> checks;
  for (const Claim& claim : claims) {
    ClaimCheck check;
    check.claim = claim;
    // How much the number is about what the claim's sentence speaks of: its row's name in the
    // sentence (3), each word of its own key or column (2), of its table or section (1).
    auto about = [&](const ReportNumber& n) {
      int score = 0;
      for (const std::string& name : n.names) {
        if (claim.sentence.find(name) != std::string::npos) {
          score += 3;
          break;
        }
      }
      auto said = [&](const std::string& w) {
        return std::find(claim.context.begin(), claim.context.end(), w) != claim.context.end();
      };
      for (const std::string& w : n.key_words) score += said(w) ? 2 : 0;
      for (const std::string& w : n.words) {
        const bool dup = std::find(n.key_words.begin(), n.key_words.end(), w) != n.key_words.end();
        score += !dup && said(w) ? 1 : 0;
      }
      return score;
    };
    auto distance = [&](const ReportNumber& n) {
      const double scale = std::max({std::fabs(claim.q.value), std::fabs(n.q.value), 1e-12});
      return std::fabs(claim.q.value - n.q.value) / scale;
    };
    int best_match_score = -1, best_about = -1;
    double closest_any = INFINITY, closest_about = INFINITY, closest_match = INFINITY;
    const ReportNumber* any = nullptr;
    const ReportNumber* related = nullptr;
    for (const ReportNumber& n : numbers) {
      if (n.q.dim != claim.q.dim) continue;
      const bool inside = n.q.hi >= claim.q.lo && n.q.lo <= claim.q.hi;
      const int score = about(n);
      const double d = distance(n);
      if (inside) {
        if (score > best_match_score || (score == best_match_score && d < closest_match)) {
          best_match_score = score;
          closest_match = d;
          check.match = &n;
        }
        continue;
      }
      if (d < closest_any) {
        closest_any = d;
        any = &n;
      }
      if (score > best_about || (score == best_about && d < closest_about)) {
        best_about = score;
        closest_about = d;
        related = &n;
      }
    }
    if (check.match != nullptr) {
      check.verdict = Verdict::kSupported;
    } else if (related != nullptr && best_about >= kAboutTheSameThing) {
      check.verdict = Verdict::kContradicted;
      check.closest = related;
    } else {
      check.verdict = Verdict::kUnsupported;
      check.closest = any;
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

}  // namespace sightline
