#include "diff/name_normalize.h"

#include <cctype>

namespace sightline {
namespace {

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

// Index of the ')' matching the '(' at `open`, or npos when unbalanced.
size_t MatchingParen(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

// The last character before `pos` that is not a space; '\0' at the start.
char PrevNonSpace(const std::string& s, size_t pos) {
  while (pos > 0) {
    if (s[--pos] != ' ') return s[pos];
  }
  return '\0';
}

// "[lambda(int) (instance 1)]" (nsys) and "{lambda(int)#1}" (Kineto) -> "{lambda#1}".
std::string NormalizeLambdas(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const bool nsys = s.compare(i, 8, "[lambda(") == 0;
    const bool kineto = !nsys && s.compare(i, 8, "{lambda(") == 0;
    if (nsys || kineto) {
      const size_t close = MatchingParen(s, i + 7);
      if (close != std::string::npos) {
        size_t j = close + 1;
        std::string_view intro = nsys ? " (instance " : "#";
        if (s.compare(j, intro.size(), intro) == 0) {
          j += intro.size();
          const size_t digits = j;
          while (j < s.size() && IsDigit(s[j])) ++j;
          const std::string_view tail = nsys ? ")]" : "}";
          if (j > digits && s.compare(j, tail.size(), tail) == 0) {
            out += "{lambda#";
            out.append(s, digits, j - digits);
            out += '}';
            i = j + tail.size();
            continue;
          }
        }
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// Drops "(type)" casts in front of integer template arguments; "(bool)1" becomes "true".
std::string DropCasts(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '(') {
      const char prev = PrevNonSpace(s, i);
      const size_t close = s.find(')', i);
      if ((prev == '<' || prev == ',' || prev == '\0') && close != std::string::npos &&
          close + 1 < s.size() && (IsDigit(s[close + 1]) || s[close + 1] == '-')) {
        bool type_like = close > i + 1;
        for (size_t k = i + 1; k < close && type_like; ++k) {
          type_like = IsIdent(s[k]) || s[k] == ' ' || s[k] == ':';
        }
        if (type_like) {
          const std::string_view type(s.data() + i + 1, close - i - 1);
          size_t end = close + 1;
          if (s[end] == '-') ++end;
          while (end < s.size() && IsDigit(s[end])) ++end;
          const std::string_view value(s.data() + close + 1, end - close - 1);
          if (type == "bool" && (value == "0" || value == "1")) {
            out += value == "1" ? "true" : "false";
            i = end;
          } else {
            i = close + 1;  // keep the value, drop the cast
          }
          continue;
        }
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

// Drops every parenthesized group that follows a name, '>', ']', '}' or ')': parameter lists.
std::string DropParameterLists(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '(') {
      const char prev = PrevNonSpace(s, i);
      if (IsIdent(prev) || prev == '>' || prev == ']' || prev == '}' || prev == ')') {
        const size_t close = MatchingParen(s, i);
        if (close != std::string::npos) {
          i = close + 1;
          continue;
        }
      }
    }
    out.push_back(s[i++]);
  }
  return out;
}

bool IsDroppedWord(std::string_view w) {
  return w == "void" || w == "const" || w == "volatile" || w == "struct" || w == "class" ||
         w == "enum" || w == "typename";
}

// Drops the words above and integer suffixes ("2ul" -> "2"), and removes whitespace.
std::string DropWordsAndSpaces(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      ++i;
      continue;
    }
    if (!IsIdent(c)) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && IsIdent(s[end])) ++end;
    std::string_view word(s.data() + i, end - i);
    if (!IsDroppedWord(word)) {
      if (IsDigit(word[0])) {
        // An integer literal with a suffix of u/l letters only: keep the digits.
        size_t d = 0;
        while (d < word.size() && IsDigit(word[d])) ++d;
        bool suffix = d < word.size() && word.size() - d <= 3;
        for (size_t k = d; k < word.size() && suffix; ++k) {
          suffix = word[k] == 'u' || word[k] == 'U' || word[k] == 'l' || word[k] == 'L';
        }
        if (suffix) word = word.substr(0, d);
      }
      out.append(word);
    }
    i = end;
  }
  return out;
}

}  // namespace

std::string NormalizeKernelName(std::string_view name) {
  std::string s(name);
  ReplaceAll(s, "(anonymous namespace)", "anon");
  ReplaceAll(s, "<unnamed>", "anon");
  ReplaceAll(s, "operator ()", "operator()");
  // "operator()" is a name, not a parameter list; rename it so the next pass keeps it.
  ReplaceAll(s, "operator()", "operator_call");
  s = NormalizeLambdas(s);
  s = DropCasts(s);
  s = DropParameterLists(s);
  s = DropWordsAndSpaces(s);
  ReplaceAll(s, "operator_call", "operator()");
  return s;
}

std::string KernelBaseKey(std::string_view normalized_key) {
  std::string out;
  out.reserve(normalized_key.size());
  int depth = 0;
  for (char c : normalized_key) {
    if (c == '<') {
      ++depth;
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out.push_back(c);
    }
  }
  return out;
}

std::string KernelDisplayName(std::string_view normalized_key) {
  std::string out;
  out.reserve(normalized_key.size());
  for (size_t i = 0; i < normalized_key.size(); ++i) {
    if (normalized_key.compare(i, 2, "::") == 0 && !out.empty() && IsIdent(out.back())) {
      while (!out.empty() && IsIdent(out.back())) out.pop_back();  // drop "ns::"
      ++i;
      continue;
    }
    out.push_back(normalized_key[i]);
  }
  return out;
}

}  // namespace sightline
