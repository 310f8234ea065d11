#include "importers/kineto/kineto_json.h"

#include "base/strings.h"
#include "importers/kineto/kineto_numbers.h"

namespace sightline::kineto {

using simdjson::SUCCESS;

namespace {

std::string_view TrimRight(std::string_view t) {
  while (!t.empty() && IsJsonSpace(t.back())) t.remove_suffix(1);
  return t;
}

}  // namespace

// The value's raw text when it is a scalar (number, string, true, false, null); empty otherwise.
// A malformed document can put a value iterator on a structural character (`[128,: ...`): its raw
// token then has no sane length (a fuzzed trace read far past the buffer), so the type is checked
// first.
std::string_view ScalarToken(sj::value& v) {
  sj::json_type type;
  if (v.type().get(type) != SUCCESS || type == sj::json_type::array ||
      type == sj::json_type::object) {
    return {};
  }
  return TrimRight(v.raw_json_token());
}

// An integer written as a JSON number ("7", "7.0") or a numeric string ("7").
bool ReadInt(sj::value& v, int64_t* out) {
  const std::string_view token = ScalarToken(v);
  if (token.empty()) return false;
  if (token[0] == '"') {
    std::string_view s;
    return ReadString(v, &s) && ParseInt64(s, out);
  }
  if (ParseInt64(token, out)) return true;
  // "7.0" or "7e0": exact via the microsecond parser (x1000), if it is integral.
  int64_t milli;
  if (!MicrosTokenToNs(token, &milli) || milli % 1000 != 0) return false;
  *out = milli / 1000;
  return true;
}

bool ReadTime(sj::value& v, int64_t* ns) { return MicrosTokenToNs(ScalarToken(v), ns); }

bool ReadString(sj::value& value, std::string_view* out) {
  const std::string_view token = ScalarToken(value);
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  const std::string_view content = token.substr(1, token.size() - 2);
  if (content.find('\\') == std::string_view::npos) {
    *out = content;
    return true;
  }
  return value.get_string().get(*out) == SUCCESS;
}

}  // namespace sightline::kineto
