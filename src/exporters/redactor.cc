#include "exporters/redactor.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace sightline {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsSeparator(char c) { return c == '/' || c == '\\'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    return s.substr(1, s.size() - 2);
  }
  return s;
}

bool StartsWithIgnoringCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoringCase(s.substr(0, prefix.size()), prefix);
}

bool AllDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool HasLetter(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return IsNameStart(c) && c != '_'; });
}

// Whether `lower` is one of the words of `list`, written "|a|b|c|".
bool InList(std::string_view list, std::string_view lower) {
  if (lower.empty()) return false;
  for (size_t i = list.find(lower); i != std::string_view::npos; i = list.find(lower, i + 1)) {
    if (i > 0 && list[i - 1] == '|' && i + lower.size() < list.size() &&
        list[i + lower.size()] == '|') {
      return true;
    }
  }
  return false;
}

// Account names that identify nobody: their folders and mentions stay.
bool IsGenericUser(std::string_view name) {
  return InList(
      "|root|user|users|nobody|public|default|shared|ubuntu|all users|default user|"
      "defaultuser0|guest|",
      LowerAscii(name));
}

bool IsIpAddress(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == ':';
  });
}

// Variables whose values describe the system (search paths, terminal, locale, CUDA's setup) rather
// than anyone: their values are removed where the variable is, but not searched elsewhere, where
// they would rewrite library paths and settings the analyses show. A user or host name inside
// them is searched as such.
bool IsDescriptiveVariable(std::string_view name) {
  const std::string lower = LowerAscii(name);
  return InList(
             "|path|ld_library_path|library_path|cpath|c_include_path|cplus_include_path|"
             "manpath|infopath|pkg_config_path|pythonpath|shell|term|colorterm|lang|language|"
             "tz|cuda_home|cuda_path|cuda_visible_devices|nvidia_visible_devices|"
             "nvidia_driver_capabilities|nvidia_require_cuda|cuda_version|omp_num_threads|"
             "hosttype|ostype|machtype|shlvl|ls_colors|_|pwd|oldpwd|home|",
             lower) ||
         lower.starts_with("lc_") || lower.starts_with("xdg_");
}

// Common variables recognised in NAME=value strings even when the file lists no environment.
bool IsCommonVariable(std::string_view name) {
  const std::string lower = LowerAscii(name);
  return InList(
             "|path|home|user|logname|username|hostname|pwd|oldpwd|shell|mail|ld_library_path|"
             "ld_preload|pythonpath|virtual_env|conda_prefix|conda_default_env|ssh_client|"
             "ssh_connection|ssh_tty|ssh_auth_sock|display|xdg_runtime_dir|sudo_user|"
             "kubeconfig|proxy|",
             lower) ||
         lower.ends_with("_proxy");
}

// Where a value written after '=' (or as the next word) ends: a quoted value at its closing quote,
// any other at a blank, ';', ',', '&' or a quote.
size_t ValueEnd(std::string_view s, size_t start) {
  if (start < s.size() && (s[start] == '"' || s[start] == '\'')) {
    const size_t close = s.find(s[start], start + 1);
    return close == std::string_view::npos ? s.size() : close + 1;
  }
  size_t end = start;
  while (end < s.size() && !IsBlank(s[end]) && s[end] != ';' && s[end] != ',' && s[end] != '"' &&
         s[end] != '\'' && s[end] != '&') {
    ++end;
  }
  return end;
}

bool IsWordStart(std::string_view s, size_t i) {
  if (i == 0) return true;
  const char c = s[i - 1];
  return IsBlank(c) || c == '"' || c == '\'' || c == '(' || c == '[' || c == '{' || c == ',' ||
         c == ';' || c == '=' || c == '`' || c == '?' || c == '&';  // & and ?: a URL's query
}

// Calls fn(begin, end) for the folder name after each /home/, /Users/, /scratch/ (when
// `with_scratch`) and C:\Users\ in `text`; separators may be doubled or escaped (JSON).
template <typename Fn>
void ForEachUserFolder(std::string_view text, bool with_scratch, Fn&& fn) {
  static constexpr std::array<std::string_view, 3> kRoots = {"home", "users", "scratch"};
  for (size_t i = 0; i < text.size(); ++i) {
    if (!IsSeparator(text[i])) continue;
    size_t j = i;
    while (j < text.size() && IsSeparator(text[j])) ++j;
    for (std::string_view root : kRoots) {
      if (root == "scratch" && !with_scratch) continue;
      if (!StartsWithIgnoringCase(text.substr(j), root)) continue;
      size_t k = j + root.size();
      if (k >= text.size() || !IsSeparator(text[k])) continue;
      while (k < text.size() && IsSeparator(text[k])) ++k;
      size_t end = k;
      while (end < text.size() && !IsSeparator(text[end]) && !IsBlank(text[end]) &&
             std::string_view("\"':;,|&=?#*<>()[]{}").find(text[end]) == std::string_view::npos &&
             text[end] != '\0') {
        ++end;
      }
      if (end > k) fn(k, end);
      i = end > i ? end - 1 : i;
      break;
    }
  }
}

bool IsLearnableUser(std::string_view name) {
  return !name.empty() && !IsGenericUser(name) && name.front() != '.' &&
         name.find_first_of("$%{~") == std::string_view::npos;
}

bool IsSecretWord(std::string_view lower) {
  if (InList("|key|token|secret|password|passwd|auth|cookie|cookies|credential|credentials|"
             "passphrase|authorization|",
             lower)) {
    return true;
  }
  for (std::string_view ending :
       {"token", "secret", "password", "apikey", "accesskey", "secretkey"}) {
    if (lower.ends_with(ending)) return true;
  }
  return false;
}

}  // namespace

bool IsGenericHost(std::string_view name) {
  const std::string lower = LowerAscii(name);
  return lower == "localhost" || lower == "localhost.localdomain" || lower == "local" ||
         lower == "(none)" || lower == "unknown";
}

bool IsPseudonym(std::string_view s) {
  if (s.size() != 13 || !s.starts_with("host-")) return false;
  return std::all_of(s.begin() + 5, s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string HostPseudonym(std::string_view host) {
  std::string key = LowerAscii(host);
  if (!IsIpAddress(key)) key = key.substr(0, key.find('.'));
  uint64_t h = 14695981039346656037ull;
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("host-{:08x}", static_cast<uint32_t>(h));
}

bool IsSecretName(std::string_view name) {
  std::string word;
  auto check = [&]() {
    const bool secret = IsSecretWord(word);
    word.clear();
    return secret;
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!IsNameChar(c) || c == '_') {
      if (check()) return true;
      continue;
    }
    // hfToken, apiKey: a new word at a lower-to-upper change.
    if (c >= 'A' && c <= 'Z' && i > 0 && name[i - 1] >= 'a' && name[i - 1] <= 'z' && check()) {
      return true;
    }
    word.push_back(LowerAscii(c));
  }
  return check();
}

void Redactor::AddNeedle(std::string_view text, NeedleKind kind, std::string replacement,
                         std::string what) {
  // A needle inside a replacement would be put back by the replacement itself.
  for (std::string_view r : {std::string_view("user"), std::string_view(kRedacted),
                             std::string_view("domain.invalid"), std::string_view("host-")}) {
    if (LowerAscii(r).find(LowerAscii(text)) != std::string::npos) return;
  }
  if (IsPseudonym(LowerAscii(text))) return;
  const int index = needles_.Add(text);
  if (index < 0) return;
  NeedleInfo info{kind, std::move(replacement), std::move(what)};
  if (static_cast<size_t>(index) == info_.size()) {
    info_.push_back(std::move(info));
  } else if (kind < info_[static_cast<size_t>(index)].kind) {
    info_[static_cast<size_t>(index)] = std::move(info);
  }
}

void Redactor::AddSecret(std::string_view value, std::string what) {
  value = Unquote(TrimBlanks(value));
  // A number after a secret-like name is a setting (--token-budget 512, --key-size 2048), and
  // numbers are everywhere (sizes, kernel names): it is removed only where it follows the name in
  // one string (`--key-size=2048`), not searched for.
  if (value.empty() || value == kRedacted || AllDigits(value)) return;
  exact_secrets_.insert(LowerAscii(value));
  AddNeedle(value, NeedleKind::kSecret, kRedacted, std::move(what));
}

void Redactor::AddUser(std::string_view name) {
  name = TrimBlanks(name);
  if (!IsLearnableUser(name)) return;
  AddNeedle(name, NeedleKind::kUser, "user", "the user name");
}

void Redactor::AddHost(std::string_view name) {
  name = TrimBlanks(name);
  if (name.empty() || IsGenericHost(name) || IsPseudonym(name)) return;
  const std::string pseudonym = HostPseudonym(name);
  AddNeedle(name, NeedleKind::kHost, pseudonym, "the host name");
  if (IsIpAddress(name)) return;
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) return;
  AddNeedle(name.substr(0, dot), NeedleKind::kHost, pseudonym, "the host name");
  // The domain and each parent with a dot in it (cluster.example.com, example.com); a one-word
  // domain ("lan", "home") identifies nobody and would rewrite every "/home/".
  for (size_t at = dot; at != std::string_view::npos; at = name.find('.', at + 1)) {
    std::string_view domain = name.substr(at + 1);
    if (domain.find('.') == std::string_view::npos) break;
    AddNeedle(domain, NeedleKind::kDomain, "domain.invalid", "the host's domain");
  }
}

bool Redactor::AddEnvironment(std::string_view assignment) {
  std::string_view s = TrimBlanks(assignment);
  if (StartsWithIgnoringCase(s, "export") && s.size() > 6 && IsBlank(s[6])) {
    s = TrimBlanks(s.substr(6));
  }
  size_t n = 0;
  while (n < s.size() && IsNameChar(s[n])) ++n;
  if (n == 0 || !IsNameStart(s[0]) || n >= s.size() || s[n] != '=') return false;
  const std::string_view name = s.substr(0, n);
  const std::string_view value = Unquote(TrimBlanks(s.substr(n + 1)));
  ++environment_variables_;
  const std::string lower = LowerAscii(name);
  variables_.insert(lower);
  if (lower == "user" || lower == "logname" || lower == "username" || lower == "sudo_user") {
    AddUser(value);
  } else if (lower == "hostname" || lower == "host" || lower == "hostname_fqdn") {
    AddHost(value);
  }
  LearnPaths(value);
  const std::string what = fmt::format("the value of environment variable {}", name);
  if (IsSecretName(name)) {
    AddSecret(value, what);
  } else if (!IsDescriptiveVariable(name) && value.size() >= 8 && HasLetter(value)) {
    AddNeedle(value, NeedleKind::kEnvironment, kRedacted, what);
  }
  return true;
}

bool IsEnvironmentBlock(std::string_view text) {
  if (text.find('\0') == std::string_view::npos) return false;
  int assignments = 0;
  size_t start = 0;
  while (start < text.size() && assignments < 2) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view piece = text.substr(start, end - start);
    const size_t eq = piece.find('=');
    if (eq != std::string_view::npos && eq > 0 &&
        std::all_of(piece.begin(), piece.begin() + eq, [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        })) {
      ++assignments;
    }
    start = end + 1;
  }
  return assignments >= 2;
}

int Redactor::AddEnvironmentList(std::string_view list) {
  int count = 0;
  size_t start = 0;
  while (start <= list.size()) {
    // nsys 2025 also keeps whole environments NUL-joined in StringIds.
    size_t end = list.find_first_of(std::string_view(";\n\r\0", 4), start);
    if (end == std::string_view::npos) end = list.size();
    count += AddEnvironment(list.substr(start, end - start));
    start = end + 1;
  }
  return count;
}

void Redactor::AddCommandLine(const std::vector<std::string>& arguments) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    std::string_view arg = TrimBlanks(arguments[i]);
    LearnPaths(arg);
    if (!arg.starts_with('-')) {
      // `env HF_TOKEN=... python ...`: an assignment whose name suggests a secret.
      const size_t eq = arg.find('=');
      if (eq != std::string_view::npos && IsSecretName(arg.substr(0, eq))) {
        AddSecret(arg.substr(eq + 1),
                  fmt::format("the value of command-line variable {}", arg.substr(0, eq)));
      }
      continue;
    }
    std::string_view name = arg.substr(0, arg.find('='));
    while (name.starts_with('-')) name.remove_prefix(1);
    if (!IsSecretName(name)) continue;
    const std::string what = fmt::format("the value of command-line option --{}", name);
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      AddSecret(arg.substr(eq + 1), what);
    } else if (i + 1 < arguments.size() && !arguments[i + 1].starts_with("--")) {
      AddSecret(arguments[++i], what);
    }
  }
}

void Redactor::LearnPaths(std::string_view text) {
  ForEachUserFolder(text, /*with_scratch=*/false,
                    [&](size_t begin, size_t end) { AddUser(text.substr(begin, end - begin)); });
}

bool Redactor::IsKnownVariable(std::string_view name) const {
  return variables_.count(LowerAscii(name)) > 0 || IsCommonVariable(name) || IsSecretName(name);
}

std::string Redactor::Redact(std::string_view text, RedactCounts* counts) const {
  RedactCounts local;
  RedactCounts& c = counts != nullptr ? *counts : local;
  if (!exact_secrets_.empty() && exact_secrets_.count(LowerAscii(Unquote(TrimBlanks(text)))) > 0) {
    ++c.secret;
    return kRedacted;
  }
  std::string out(text);
  bool kinds[5] = {};
  // 1. Learned strings; again while a replacement made a new one (bounded: each pass shortens
  // or keeps what it matched).
  for (int pass = 0; pass < 4; ++pass) {
    std::string next;
    size_t copied = 0;
    for (auto m = needles_.FindNext(out, 0); m; m = needles_.FindNext(out, m->pos + m->length)) {
      const NeedleInfo& info = info_[static_cast<size_t>(m->needle)];
      next.append(out, copied, m->pos - copied);
      next += info.replacement;
      copied = m->pos + m->length;
      kinds[static_cast<int>(info.kind)] = true;
    }
    if (copied == 0) break;
    next.append(out, copied, std::string::npos);
    out = std::move(next);
  }
  // 2. NAME=value of a variable: the value goes.
  for (size_t eq = out.find('='); eq != std::string::npos; eq = out.find('=', eq + 1)) {
    size_t start = eq;
    while (start > 0 && IsNameChar(out[start - 1])) --start;
    if (start == eq || !IsNameStart(out[start]) || !IsWordStart(out, start)) continue;
    if (!IsKnownVariable(std::string_view(out).substr(start, eq - start))) continue;
    const size_t end = ValueEnd(out, eq + 1);
    if (end == eq + 1) continue;
    out.erase(eq + 1, end - eq - 1);
    kinds[static_cast<int>(NeedleKind::kEnvironment)] = true;
  }
  // 3. --secret-option value, --secret-option=value.
  for (size_t dash = out.find('-'); dash != std::string::npos; dash = out.find('-', dash + 1)) {
    if (!IsWordStart(out, dash)) continue;
    size_t name = dash;
    while (name < out.size() && name - dash < 2 && out[name] == '-') ++name;
    size_t name_end = name;
    while (name_end < out.size() &&
           (IsNameChar(out[name_end]) || out[name_end] == '-' || out[name_end] == '.')) {
      ++name_end;
    }
    if (name_end == name || !IsSecretName(std::string_view(out).substr(name, name_end - name))) {
      continue;
    }
    size_t value = name_end;
    if (value < out.size() && out[value] == '=') {
      ++value;
    } else {
      while (value < out.size() && (out[value] == ' ' || out[value] == '\t')) ++value;
      if (value == name_end || (value < out.size() && out[value] == '-')) continue;
    }
    const size_t end = ValueEnd(out, value);
    if (end == value || out.compare(value, end - value, kRedacted) == 0) continue;
    out.replace(value, end - value, kRedacted);
    kinds[static_cast<int>(NeedleKind::kSecret)] = true;
    dash = value;
  }
  // 4. scheme://NAME:PASSWORD@host.
  for (size_t at = out.find("://"); at != std::string::npos; at = out.find("://", at + 3)) {
    const size_t begin = at + 3;
    size_t end = begin;
    while (end < out.size() &&
           std::string_view("/?#@\"' \t\n").find(out[end]) == std::string_view::npos) {
      ++end;
    }
    if (end >= out.size() || out[end] != '@') continue;
    const std::string_view userinfo = std::string_view(out).substr(begin, end - begin);
    if (userinfo.find(':') == std::string_view::npos || userinfo == kRedacted) continue;
    out.replace(begin, end - begin, kRedacted);
    kinds[static_cast<int>(NeedleKind::kSecret)] = true;
  }
  // 5. User folders.
  bool paths = false;
  out = RedactUserPaths(out, &paths);
  kinds[static_cast<int>(NeedleKind::kUser)] |= paths;

  c.user += kinds[static_cast<int>(NeedleKind::kUser)];
  c.host +=
      kinds[static_cast<int>(NeedleKind::kHost)] || kinds[static_cast<int>(NeedleKind::kDomain)];
  c.environment += kinds[static_cast<int>(NeedleKind::kEnvironment)];
  c.secret += kinds[static_cast<int>(NeedleKind::kSecret)];
  return out;
}

size_t Redactor::learned() const {
  size_t short_secrets = 0;
  for (const std::string& s : exact_secrets_) short_secrets += s.size() < NeedleSet::kMinLength;
  return info_.size() + short_secrets;
}

std::vector<int> Redactor::Find(std::string_view text, size_t min_length) const {
  std::vector<int> found;
  for (auto m = needles_.FindNext(text, 0, min_length); m;
       m = needles_.FindNext(text, m->pos + m->length, min_length)) {
    if (std::find(found.begin(), found.end(), m->needle) == found.end()) {
      found.push_back(m->needle);
    }
  }
  return found;
}

std::string RedactUserPaths(std::string_view text, bool* changed) {
  std::string out;
  size_t copied = 0;
  ForEachUserFolder(text, /*with_scratch=*/true, [&](size_t begin, size_t end) {
    const std::string_view name = text.substr(begin, end - begin);
    if (IsGenericUser(name)) return;
    out.append(text.substr(copied, begin - copied));
    out += "user";
    copied = end;
    *changed = true;
  });
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

}  // namespace sightline
