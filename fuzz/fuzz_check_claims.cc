// `sightline check-claims` (docs/check-claims.md) on arbitrary input: the bytes up to the first
// NUL are the JSON (read both as a report, `analyze --format json`, and as query results, `query
// --format json`), the rest is the text whose claims are checked against the numbers found;
// every verdict's numbers are then formatted as the command prints them. The seeds
// (fuzz/seeds/check_claims) are a small trace's report and a query result, each with a text of
// claims in every unit, rounding and hedge the reader knows.
// CI executions: 500
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "query/claims.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = sightline::fuzz::AsView(data, size);
  const size_t nul = input.find('\0');
  const std::string_view json = input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? "" : input.substr(nul + 1);
  std::vector<sightline::ReportNumber> numbers;
  if (auto report = sightline::ReportNumbers(json, "report.json"); report.ok()) {
    numbers = std::move(*report);
  }
  if (auto result = sightline::QueryResultNumbers(json, "result.json"); result.ok()) {
    for (sightline::ReportNumber& n : *result) numbers.push_back(std::move(n));
  }
  for (const sightline::Quantity& q : sightline::NumbersIn(text)) {
    (void)sightline::FormatQuantity(q);
  }
  const std::vector<sightline::ClaimCheck> checks =
      sightline::CheckClaims(sightline::ExtractClaims(text), numbers);
  for (const sightline::ClaimCheck& c : checks) {
    (void)sightline::FormatQuantity(c.claim.q);
    if (c.match != nullptr) (void)sightline::FormatQuantity(c.match->q);
    if (c.closest != nullptr) (void)sightline::FormatQuantity(c.closest->q);
    (void)sightline::VerdictName(c.verdict);
    (void)sightline::DimensionName(c.claim.q.dim);
  }
  return 0;
}
