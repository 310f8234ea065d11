#include "exporters/redact.h"

#include <fmt/format.h>

#include <set>

#include "base/file_io.h"
#include "base/input_data.h"
#include "exporters/redact_nsys.h"
#include "exporters/redact_processes.h"
#include "exporters/redact_recording.h"
#include "importers/inputs.h"
#include "importers/nsys/sqlite_db.h"

namespace sightline {
namespace {

constexpr char kNsys[] = "nsys-sqlite";
constexpr char kRecording[] = "sightline-recorder";

// The reader that takes `path`, refused unless redact handles it.
StatusOr<std::string> RedactableFormat(const std::string& path) {
  // A run's process tree is no input of analyze's readers: recognised by its first bytes.
  if (StatusOr<std::string> head = ReadFilePrefix(path, 256);
      head.ok() && LooksLikeProcessesDocument(*head)) {
    return std::string(kProcessesFormat);
  }
  ASSIGN_OR_RETURN(RecognisedInput in, RecogniseInput(path));
  const std::string format = in.reader->name;
  if (format != kNsys && format != kRecording) {
    return InvalidArgumentError(fmt::format(
        "{}: a {} ({}); redact copies Nsight Systems SQLite exports and Sightline recordings, "
        "the inputs that carry the capturing machine's environment",
        path, InputKindName(in.reader->kind), in.reader->description));
  }
  return format;
}

// The learned strings of 6 bytes or more anywhere in the bytes of `path` (decompressed), which
// the value-by-value scan did not find: in a database, free space, a page the scan cannot read.
Status ScanRawBytes(const std::string& path, const Redactor& redactor, RedactCheckResult& result,
                    const std::set<std::string>& already) {
  ASSIGN_OR_RETURN(std::string bytes, ReadInput(path));
  for (int needle : redactor.Find(bytes, /*min_length=*/6)) {
    if (already.count(redactor.What(needle)) > 0) continue;
    result.findings.push_back(
        fmt::format("the file's bytes, outside every value read (free space, a damaged page): {}",
                    redactor.What(needle)));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Redactor> LearnIdentity(const std::string& input) {
  ASSIGN_OR_RETURN(std::string format, RedactableFormat(input));
  Redactor redactor;
  if (format == kNsys) {
    ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::OpenReadOnly(input));
    RETURN_IF_ERROR(LearnNsysIdentity(db, redactor));
  } else if (format == kProcessesFormat) {
    ASSIGN_OR_RETURN(std::string file, ReadInput(input));
    RETURN_IF_ERROR(LearnProcessesIdentity(file, input, redactor));
  } else {
    ASSIGN_OR_RETURN(std::string file, ReadInput(input));
    RETURN_IF_ERROR(LearnRecordingIdentity(file, input, redactor));
  }
  return redactor;
}

StatusOr<RedactSummary> RedactFile(const std::string& input, const std::string& output) {
  RedactSummary sum;
  ASSIGN_OR_RETURN(sum.format, RedactableFormat(input));
  if (sum.format == kNsys) {
    RETURN_IF_ERROR(RedactNsys(input, output, sum));
    return sum;
  }
  ASSIGN_OR_RETURN(std::string file, ReadInput(input));
  Redactor redactor;
  std::string copy;
  RedactCheckResult check;
  if (sum.format == kProcessesFormat) {
    RETURN_IF_ERROR(LearnProcessesIdentity(file, input, redactor));
    ASSIGN_OR_RETURN(copy, RedactProcessesDocument(file, input, redactor, sum));
    RETURN_IF_ERROR(ScanProcessesDocument(copy, output, redactor, check));
  } else {
    RETURN_IF_ERROR(LearnRecordingIdentity(file, input, redactor));
    ASSIGN_OR_RETURN(copy, RedactRecording(file, input, redactor, sum));
    RETURN_IF_ERROR(ScanRecording(copy, output, redactor, check));
  }
  if (!check.findings.empty()) {
    return InternalError(fmt::format(
        "{}: the redacted copy still holds {} things (first: {}); nothing was written. This is a "
        "bug in sightline redact: please report it",
        input, check.findings.size(), check.findings.front()));
  }
  NoteInputFile(input);
  RETURN_IF_ERROR(WriteFileAtomically(output, copy));
  return sum;
}

StatusOr<RedactCheckResult> CheckRedactedCopy(const std::string& copy,
                                              const std::string& original) {
  ASSIGN_OR_RETURN(Redactor redactor, LearnIdentity(original));
  RedactCheckResult result;
  ASSIGN_OR_RETURN(result.format, RedactableFormat(copy));
  result.learned = static_cast<int64_t>(redactor.learned());
  if (result.format == kNsys) {
    ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::OpenReadOnly(copy));
    RETURN_IF_ERROR(ScanNsysDatabase(db.handle(), copy, redactor, result));
  } else if (result.format == kProcessesFormat) {
    ASSIGN_OR_RETURN(std::string file, ReadInput(copy));
    RETURN_IF_ERROR(ScanProcessesDocument(file, copy, redactor, result));
  } else {
    ASSIGN_OR_RETURN(std::string file, ReadInput(copy));
    RETURN_IF_ERROR(ScanRecording(file, copy, redactor, result));
  }
  std::set<std::string> already;
  for (const std::string& f : result.findings) already.insert(f.substr(f.rfind(": ") + 2));
  RETURN_IF_ERROR(ScanRawBytes(copy, redactor, result, already));
  return result;
}

}  // namespace sightline
