// What `sightline redact` takes out of a file, and the one function every string of the copy goes
// through (exporters/redact.h). The identity is learned from the file itself first
// (redact_nsys.cc, redact_recording.cc): the user, the host, the profiled process's environment
// and the secrets of its command line. Redact() then rewrites a string:
//   1. every learned name or value, wherever it appears and in any case (NeedleSet): the user ->
//      "user", the host (full or short name) -> its pseudonym, the host's domain ->
//      "domain.invalid", an environment value or a command-line secret -> "<redacted>";
//   2. NAME=value where NAME is a variable of the file's environment, a common one (PATH,
//      http_proxy, ...) or a name that suggests a secret: the value goes, "NAME=" stays (also after
//      `export ` and blanks). Other NAME=value strings (a range named PHASE=prefill) are kept;
//   3. --option value and --option=value where the option's name suggests a secret (key, token,
//      secret, password, passwd, auth, credential, cookie): the value -> "<redacted>";
//   4. the credentials of a URL (scheme://NAME:PASSWORD@) -> "<redacted>";
//   5. the folder after /home/, /Users/, /scratch/ and C:\Users\ -> "user".
// Find() says which learned strings a text still holds (`sightline redact --check`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "exporters/needle_set.h"

namespace sightline {

inline constexpr char kRedacted[] = "<redacted>";

enum class NeedleKind { kUser, kHost, kDomain, kSecret, kEnvironment };  // by priority

// Strings changed, per kind of what was removed from them.
struct RedactCounts {
  int64_t user = 0;
  int64_t host = 0;
  int64_t environment = 0;
  int64_t secret = 0;
};

// The pseudonym of a host name: "host-" and the low 32 bits of the FNV-1a hash of its short name
// in lower case, so that one host has one pseudonym in every file and however it is written.
std::string HostPseudonym(std::string_view host);

// True when a variable's or an option's name suggests a secret: one of its words (split at
// '-', '_', '.' and lower-to-upper case changes) is key, token, secret, password, passwd, auth,
// credential(s), cookie(s), passphrase or authorization, or ends with token, secret, password,
// apikey, accesskey or secretkey (HF_TOKEN, --api-key, hfToken; not --max-tokens).
bool IsSecretName(std::string_view name);

// A host name that identifies nobody (localhost, "(none)", ...), and a pseudonym ("host-" and 8
// hex digits) already.
bool IsGenericHost(std::string_view name);
bool IsPseudonym(std::string_view s);

// A whole environment stored as one NUL-joined string ("HOME=/root\0PATH=...\0..."; nsys 2025
// exports keep such blocks in StringIds): at least two NAME=value pieces.
bool IsEnvironmentBlock(std::string_view text);

class Redactor {
 public:
  // Learning. Names that identify nobody (root, localhost, ...) and strings too short to search
  // are ignored.
  void AddUser(std::string_view name);
  void AddHost(std::string_view name);
  // One variable as an environment lists it: "NAME=value", also "export NAME=value", " name=v",
  // a quoted value. False when `assignment` is none.
  bool AddEnvironment(std::string_view assignment);
  // A whole environment in one string, variables separated by ';' or line breaks (nsys's
  // DeviceEnvironment). Returns how many variables it held.
  int AddEnvironmentList(std::string_view list);
  // The profiled command line, argv[1...] (nsys: PROCESS_n:ARGUMENT_k in order of k): values of
  // options whose names suggest a secret, "--name value" or "--name=value", become secrets.
  void AddCommandLine(const std::vector<std::string>& arguments);
  // Users named by the paths in `text`: /home/NAME/, /Users/NAME/, C:\Users\NAME\ (a folder under
  // /scratch/ is rewritten in place but not learned: it is as often a project as a user).
  void LearnPaths(std::string_view text);

  // `text` with everything above removed. Counts what changed when `counts` is given.
  std::string Redact(std::string_view text, RedactCounts* counts = nullptr) const;

  // Which learned strings `text` holds, by index (see What); needles shorter than `min_length`
  // bytes are skipped (a scan of raw file bytes skips short ones, which binary data can spell).
  std::vector<int> Find(std::string_view text, size_t min_length = 0) const;
  // What a learned string is, without quoting it: "the user name", "the value of HF_TOKEN".
  const std::string& What(int needle) const { return info_[static_cast<size_t>(needle)].what; }
  // How many names and values were learned (a secret too short to search counts once).
  size_t learned() const;
  int64_t environment_variables() const { return environment_variables_; }

 private:
  struct NeedleInfo {
    NeedleKind kind;
    std::string replacement;
    std::string what;
  };
  void AddNeedle(std::string_view text, NeedleKind kind, std::string replacement, std::string what);
  void AddSecret(std::string_view value, std::string what);
  bool IsKnownVariable(std::string_view name) const;

  NeedleSet needles_;
  std::vector<NeedleInfo> info_;                   // by needle index
  std::unordered_set<std::string> variables_;      // the environment's names, lower case
  std::unordered_set<std::string> exact_secrets_;  // too short to search: whole strings only
  int64_t environment_variables_ = 0;
};

// `text` with the folder after /home/, /Users/, /scratch/ and C:\Users\ replaced by "user" (step
// 5 above); `changed` says whether anything was.
std::string RedactUserPaths(std::string_view text, bool* changed);

}  // namespace sightline
