#include "exporters/redact_recording.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "shared/recorder_format.h"

namespace sightline {
namespace {

// Reads every record; an unreadable or damaged recording is an error naming `name`.
template <typename Visitor>
Status ReadWholeRecording(std::string_view file, const std::string& name, Visitor&& visit) {
  recfmt::ReadSummary summary;
  const std::string error = recfmt::ReadRecords(file, &summary, visit);
  if (!error.empty()) return InvalidInputError(fmt::format("{}: {}", name, error));
  if (summary.bad_chunks > 0 || summary.malformed_records > 0) {
    return InvalidInputError(fmt::format(
        "{}: the recording is damaged ({} bytes unread); redact copies whole recordings only, "
        "so that the copy's report equals the original's",
        name, summary.unread_bytes));
  }
  return Status::Ok();
}

}  // namespace

Status LearnRecordingIdentity(std::string_view file, const std::string& name, Redactor& redactor) {
  std::set<uint32_t> hosts;
  std::map<uint32_t, std::string_view> strings;
  RETURN_IF_ERROR(
      ReadWholeRecording(file, name, [&](recfmt::RecordType type, std::string_view body) {
        if (type == recfmt::RecordType::kProcess) {
          const recfmt::ProcessBody p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
          if (p.hostname_string != recfmt::kNoString) hosts.insert(p.hostname_string);
          return;
        }
        uint32_t id = 0;
        std::string_view text;
        if (type == recfmt::RecordType::kString && recfmt::DecodeString(body, &id, &text)) {
          strings[id] = text;
        }
      }));
  for (uint32_t id : hosts) {
    if (auto it = strings.find(id); it != strings.end()) redactor.AddHost(it->second);
  }
  for (const auto& [id, text] : strings) redactor.LearnPaths(text);
  return Status::Ok();
}

StatusOr<std::string> RedactRecording(std::string_view file, const std::string& name,
                                      const Redactor& redactor, RedactSummary& sum) {
  // The process records' host strings become the pseudonym whole, however short the name (a
  // name of two letters is too short to search for elsewhere, but not to keep here).
  std::set<uint32_t> hosts;
  RETURN_IF_ERROR(
      ReadWholeRecording(file, name, [&](recfmt::RecordType type, std::string_view body) {
        if (type == recfmt::RecordType::kProcess) {
          const auto p = recfmt::DecodeBody<recfmt::ProcessBody>(body);
          if (p.hostname_string != recfmt::kNoString) hosts.insert(p.hostname_string);
        }
      }));
  std::string out = recfmt::FileHeaderBytes();
  recfmt::ChunkBuilder chunk;
  RedactCounts counts;
  RETURN_IF_ERROR(
      ReadWholeRecording(file, name, [&](recfmt::RecordType type, std::string_view body) {
        uint32_t id = 0;
        std::string_view text;
        if (type == recfmt::RecordType::kString && recfmt::DecodeString(body, &id, &text)) {
          if (hosts.count(id) > 0 && !text.empty() && !IsPseudonym(text) && !IsGenericHost(text)) {
            ++counts.host;
            chunk.AddString(id, HostPseudonym(text));
          } else {
            chunk.AddString(id, redactor.Redact(text, &counts));
          }
        } else {
          chunk.AddRaw(type, body.data(), body.size());
        }
        if (chunk.payload_bytes() >= (4u << 20)) out += chunk.Finish();
      }));
  if (!chunk.empty()) out += chunk.Finish();
  sum.environment_values = counts.environment;
  sum.host_names = counts.host;
  sum.user_names = counts.user;
  sum.secrets = counts.secret;
  return out;
}

Status ScanRecording(std::string_view file, const std::string& name, const Redactor& redactor,
                     RedactCheckResult& result) {
  std::map<int, std::pair<uint32_t, int64_t>> found;  // needle -> first string id, more
  RETURN_IF_ERROR(
      ReadWholeRecording(file, name, [&](recfmt::RecordType type, std::string_view body) {
        uint32_t id = 0;
        std::string_view text;
        if (type != recfmt::RecordType::kString || !recfmt::DecodeString(body, &id, &text)) return;
        ++result.strings;
        for (int needle : redactor.Find(text)) {
          auto [it, fresh] = found.try_emplace(needle, id, 0);
          if (!fresh) ++it->second.second;
        }
      }));
  for (const auto& [needle, where] : found) {
    result.findings.push_back(fmt::format(
        "string {}{}: {}", where.first,
        where.second > 0 ? fmt::format(" (and {} more strings)", where.second) : std::string(),
        redactor.What(needle)));
  }
  return Status::Ok();
}

}  // namespace sightline
