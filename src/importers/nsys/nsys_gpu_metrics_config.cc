#include "importers/nsys/nsys_gpu_metrics_config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace sightline {
namespace {

std::string_view TrimConfigField(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string Unquote(std::string_view s) {
  s = TrimConfigField(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

}  // namespace

std::vector<GpuMetricSet> ParseGpuMetricsConfig(std::string_view yaml) {
  // The nesting nsys writes: metricSets / - name (set) / chips / - CHIP / metrics / - name (metric)
  // / subMetrics / - name (sub-metric) / multiplier. Items are told apart by their indentation
  // relative to the keys that open their lists.
  std::vector<GpuMetricSet> sets;
  enum class List { kNone, kSets, kChips, kMetrics, kSubMetrics };
  List list = List::kNone;
  size_t sets_indent = 0, chips_indent = 0, metrics_indent = 0, subs_indent = 0;
  std::string metric, sub;
  auto close_sub = [&]() {
    if (!sets.empty() && !metric.empty() && !sub.empty()) {
      sets.back().scales.try_emplace(metric + " [" + sub + "]", 1.0);
    }
  };
  size_t pos = 0;
  while (pos < yaml.size()) {
    size_t end = yaml.find('\n', pos);
    if (end == std::string_view::npos) end = yaml.size();
    std::string_view line = yaml.substr(pos, end - pos);
    pos = end + 1;
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    std::string_view body = TrimConfigField(line.substr(indent));
    if (body.empty() || body.front() == '#') continue;
    const bool item = body.starts_with("- ");
    if (item) body = TrimConfigField(body.substr(2));
    const size_t colon = body.find(':');
    const std::string_view key =
        colon == std::string_view::npos ? body : TrimConfigField(body.substr(0, colon));
    const std::string_view value = colon == std::string_view::npos
                                       ? std::string_view()
                                       : TrimConfigField(body.substr(colon + 1));
    // Leaving a list: a line at or left of the key that opened it.
    if (list == List::kSubMetrics && indent <= subs_indent) list = List::kMetrics;
    if (list == List::kMetrics && indent <= metrics_indent) list = List::kSets;
    if (list == List::kChips && indent <= chips_indent) list = List::kSets;
    if (list == List::kSets && indent <= sets_indent) list = List::kNone;
    if (colon != std::string_view::npos && value.empty() && !item) {
      if (key == "metricSets") {
        list = List::kSets;
        sets_indent = indent;
      } else if (key == "chips" && list == List::kSets) {
        list = List::kChips;
        chips_indent = indent;
      } else if (key == "metrics" && list == List::kSets) {
        list = List::kMetrics;
        metrics_indent = indent;
      } else if (key == "subMetrics" && list == List::kMetrics) {
        list = List::kSubMetrics;
        subs_indent = indent;
      }
      continue;
    }
    switch (list) {
      case List::kSets:
        if (item && key == "name") {
          sets.emplace_back().name = Unquote(value);
          metric.clear();
        }
        break;
      case List::kChips:
        if (item && colon == std::string_view::npos && !sets.empty()) {
          sets.back().chips.push_back(Unquote(body));
        }
        break;
      case List::kMetrics:
        if (item && key == "name") {
          metric = Unquote(value);
          sub.clear();
        }
        break;
      case List::kSubMetrics:
        if (item && key == "name") {
          sub = Unquote(value);
          close_sub();
        } else if (key == "multiplier" && !sets.empty() && !metric.empty() && !sub.empty()) {
          const std::string text = Unquote(value);
          char* parsed_end = nullptr;
          const double m = std::strtod(text.c_str(), &parsed_end);
          if (parsed_end != text.c_str() && *parsed_end == '\0') {
            sets.back().scales[metric + " [" + sub + "]"] = m;
          }
        }
        break;
      case List::kNone:
        break;
    }
  }
  return sets;
}

const GpuMetricSet* PickGpuMetricSet(const std::vector<GpuMetricSet>& sets,
                                     const std::vector<std::string>& names, std::string_view chip) {
  const GpuMetricSet* first = nullptr;
  for (const GpuMetricSet& s : sets) {
    const bool all = std::all_of(names.begin(), names.end(),
                                 [&](const std::string& n) { return s.scales.count(n) > 0; });
    if (!all) continue;
    if (std::find(s.chips.begin(), s.chips.end(), chip) != s.chips.end()) return &s;
    if (first == nullptr) first = &s;
  }
  return first;
}

}  // namespace sightline
