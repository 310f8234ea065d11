#include "importers/kineto/kineto_json.h"

#include "importers/kineto/kineto_numbers.h"

namespace sightline::kineto {

using simdjson::SUCCESS;

namespace {

bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view TrimRight(std::string_view t) {
  while (!t.empty() && IsJsonSpace(t.back())) t.remove_suffix(1);
  return t;
}

}  // namespace

// An integer written as a JSON number ("7", "7.0") or a numeric string ("7").
bool ReadInt(sj::value& v, int64_t* out) {
  const std::string_view token = TrimRight(v.raw_json_token());
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

bool ReadTime(sj::value& v, int64_t* ns) { return MicrosTokenToNs(v.raw_json_token(), ns); }

bool ReadString(sj::value& value, std::string_view* out) {
  const std::string_view token = TrimRight(value.raw_json_token());
  if (token.size() < 2 || token.front() != '"' || token.back() != '"') return false;
  const std::string_view content = token.substr(1, token.size() - 2);
  if (content.find('\\') == std::string_view::npos) {
    *out = content;
    return true;
  }
  return value.get_string().get(*out) == SUCCESS;
}

}  // namespace sightline::kineto
