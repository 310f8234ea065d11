// The names TraceBuilder derives or gives (trace_builder.h): short kernel names, API names without
// nsys's version suffix, the rows that stand for a whole CUDA graph's run.
#include <cctype>
#include <string>

#include "model/trace_builder.h"

namespace sightline {
namespace {

constexpr std::string_view kAnonymousNamespace = "(anonymous namespace)";

// The position of a kernel name's parameter list: the first '(' outside template brackets and
// braces; npos for names without one (e.g. "ampere_sgemm_128x64_nn", Triton or Myelin kernels).
size_t FindParameterList(std::string_view full) {
  int angle = 0, brace = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    const char c = full[i];
    if (c == '<')
      ++angle;
    else if (c == '>' && angle > 0)
      --angle;
    else if (c == '{')
      ++brace;
    else if (c == '}' && brace > 0)
      --brace;
    else if (c == '(' && angle == 0 && brace == 0) {
      // "(anonymous namespace)::f" is part of the name, not a parameter list.
      if (full.substr(i).starts_with(kAnonymousNamespace)) {
        i += kAnonymousNamespace.size() - 1;
        continue;
      }
      return i;
    }
  }
  return std::string_view::npos;
}

// `head` without its template arguments at depth 0.
std::string WithoutTemplateArguments(std::string_view head) {
  std::string base;
  base.reserve(head.size());
  int angle = 0;
  for (char c : head) {
    if (c == '<') {
      ++angle;
      continue;
    }
    if (c == '>' && angle > 0) {
      --angle;
      continue;
    }
    if (angle == 0) base.push_back(c);
  }
  return base;
}

}  // namespace

std::string_view StripApiVersionSuffix(std::string_view name) {
  // nsys names calls "cudaLaunchKernel_v7000"; real API names may end in "_v2", so only a suffix
  // of four or more digits is a version.
  const size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || name.size() - pos - 2 < 4) return name;
  for (size_t i = pos + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, pos);
}

std::string WholeGraphName(int64_t graph_id) {
  return "CUDA graph " + std::to_string(graph_id) + " (whole graph)";
}

bool IsWholeGraphName(std::string_view name) {
  return name.starts_with("CUDA graph ") && name.ends_with(" (whole graph)");
}

void NoteWholeGraphRuns(Diagnostics& diagnostics, int64_t runs) {
  if (runs > 0) diagnostics.Add(DiagCode::kWholeGraphRuns, runs);
}

std::string ShortKernelName(std::string_view full) {
  const size_t params = FindParameterList(full);
  std::string base = WithoutTemplateArguments(full.substr(0, params));
  // Drop the return type ("void ") and the qualifiers: keep the last name component.
  const size_t space = base.rfind(' ');
  if (space != std::string::npos && params != std::string_view::npos) base = base.substr(space + 1);
  const size_t colons = base.rfind("::");
  if (colons != std::string::npos && colons + 2 < base.size()) base = base.substr(colons + 2);
  while (!base.empty() && base.back() == ' ') base.pop_back();
  if (base.empty()) return std::string(full);
  return base;
}

}  // namespace sightline
