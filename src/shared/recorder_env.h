// The settings `sightline record` passes to libsightline_recorder.so through SIGHTLINE_RECORD_*
// environment variables, and the helpers both sides need (rank detection, rank lists, capture-range
// end, output-path patterns). Header-only, standard library only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace sightline::recenv {

inline constexpr char kOutputEnv[] = "SIGHTLINE_RECORD_OUTPUT";  // path pattern
inline constexpr char kCaptureRangeEnv[] =
    "SIGHTLINE_RECORD_CAPTURE_RANGE";  // none|cudaProfilerApi
inline constexpr char kCaptureEndEnv[] = "SIGHTLINE_RECORD_CAPTURE_RANGE_END";  // stop|repeat[:N]
inline constexpr char kRanksEnv[] = "SIGHTLINE_RECORD_RANKS";               // "0,3,5-7"; unset: all
inline constexpr char kBufferBytesEnv[] = "SIGHTLINE_RECORD_BUFFER_BYTES";  // CUPTI buffer size
inline constexpr char kManifestEnv[] =
    "SIGHTLINE_RECORD_MANIFEST";  // file the library lists outputs in
inline constexpr char kDriverApiEnv[] = "SIGHTLINE_RECORD_DRIVER_API";  // 1, or 0 (default)
inline constexpr char kQueryCallsEnv[] =
    "SIGHTLINE_RECORD_QUERY_CALLS";  // 1: keep cudaGetDevice...
// Diagnostic only (what costs what): activity left out, a comma list of
// kernel,runtime,sync,memcpy,memset,nvtx. A recording made with it lacks those records.
inline constexpr char kSkipEnv[] = "SIGHTLINE_RECORD_SKIP";
// Diagnostic only: "0" records without the launcher's watch of the process tree (what the
// /proc scans cost a run); the run's tree then holds the program's own process only.
inline constexpr char kWatchEnv[] = "SIGHTLINE_RECORD_WATCH";
// --cuda-graph-trace: "graph" records one record per graph run (CUPTI_ACTIVITY_KIND_GRAPH_TRACE),
// anything else ("node", the default) every kernel inside the graph.
inline constexpr char kGraphTraceEnv[] = "SIGHTLINE_RECORD_GRAPH_TRACE";
// GPU metrics: the sampling frequency in Hz (unset or 0: none).
inline constexpr char kGpuMetricsEnv[] = "SIGHTLINE_RECORD_GPU_METRICS";
// "1": record GPU memory allocations, releases and pools (--cuda-memory-usage).
inline constexpr char kCudaMemoryEnv[] = "SIGHTLINE_RECORD_CUDA_MEMORY";

inline constexpr char kDefaultOutputPattern[] = "sightline-%p.slrec";

// Reads one environment variable; std::getenv unless a test substitutes its own.
using GetEnvFn = const char* (*)(const char*);
inline const char* StdGetEnv(const char* name) { return std::getenv(name); }

// The process's rank from the launcher's environment, or -1: the first of OMPI_COMM_WORLD_RANK
// (Open MPI), PMI_RANK (MPICH, Intel MPI), SLURM_PROCID (srun), RANK (torchrun), LOCAL_RANK that
// holds a non-negative integer (surrounding blanks allowed). The recorder's --ranks and the
// instrument library's SIGHTLINE_PROFILE_RANKS both use it, so they agree on a process's rank.
inline int DetectRank(GetEnvFn getenv_fn = &StdGetEnv) {
  for (const char* name :
       {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK", "LOCAL_RANK"}) {
    const char* v = getenv_fn(name);
    if (v == nullptr) continue;
    while (*v == ' ' || *v == '\t') ++v;
    if (*v < '0' || *v > '9') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\n') ++end;
    if (*end == '\0' && r >= 0 && r < (1L << 30)) return static_cast<int>(r);
  }
  return -1;
}

inline int DetectWorldSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end == '\0' && n > 0 && n < (1L << 30)) return static_cast<int>(n);
  }
  return 0;
}

struct RankRange {
  int first, last;  // inclusive
};

// Parses "0,3,5-7". Returns "" or what is wrong.
inline std::string ParseRankList(std::string_view text, std::vector<RankRange>* out) {
  out->clear();
  if (text.empty()) return "the rank list is empty";
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string item(text.substr(pos, comma - pos));
    const size_t dash = item.find('-');
    auto number = [](const std::string& s, int* v) {
      if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
        return false;
      }
      *v = std::atoi(s.c_str());
      return true;
    };
    RankRange r{};
    const bool ok = dash == std::string::npos
                        ? number(item, &r.first) && (r.last = r.first, true)
                        : number(item.substr(0, dash), &r.first) &&
                              number(item.substr(dash + 1), &r.last) && r.first <= r.last;
    if (!ok) {
      return "bad rank list item '" + item + "' (expected ranks like 0,3,5-7)";
    }
    out->push_back(r);
    pos = comma + 1;
  }
  return "";
}

// An unknown rank (-1: not launched by MPI, Slurm or torchrun) counts as rank 0.
inline bool RankSelected(const std::vector<RankRange>& ranks, int rank) {
  if (rank < 0) rank = 0;
  for (const RankRange& r : ranks) {
    if (rank >= r.first && rank <= r.last) return true;
  }
  return false;
}

// "stop" -> 0 (one window), "repeat" -> -1 (every window), "repeat:N" -> N windows.
inline std::string ParseCaptureRangeEnd(std::string_view text, int* repeat) {
  if (text == "stop") {
    *repeat = 0;
    return "";
  }
  if (text == "repeat") {
    *repeat = -1;
    return "";
  }
  if (text.substr(0, 7) == "repeat:") {
    const std::string n(text.substr(7));
    if (!n.empty() && n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos &&
        std::atoi(n.c_str()) > 0) {
      *repeat = std::atoi(n.c_str());
      return "";
    }
  }
  return "bad capture-range end '" + std::string(text) +
         "' (expected stop, repeat or repeat:N, N >= 1)";
}

// --cuda-graph-trace: "node" (every graph kernel recorded), "graph" (one record per graph run) or
// "sampled:N" (every N-th graph launch of the process node by node, the others as whole graphs;
// 2 <= N <= 1000000). *sample is 0 for node and graph, N for sampled; *whole_graphs says whether
// graph launches start out traced as whole graphs.
inline constexpr uint32_t kMaxGraphTraceSample = 1'000'000;
inline std::string ParseGraphTrace(std::string_view text, bool* whole_graphs, uint32_t* sample) {
  *whole_graphs = false;
  *sample = 0;
  if (text == "node") return "";
  if (text == "graph") {
    *whole_graphs = true;
    return "";
  }
  if (text.substr(0, 8) == "sampled:") {
    const std::string n(text.substr(8));
    if (!n.empty() && n.size() <= 7 && n.find_first_not_of("0123456789") == std::string::npos) {
      const long v = std::atol(n.c_str());
      if (v >= 2 && v <= static_cast<long>(kMaxGraphTraceSample)) {
        *whole_graphs = true;
        *sample = static_cast<uint32_t>(v);
        return "";
      }
    }
  }
  return "bad CUDA graph trace '" + std::string(text) +
         "' (expected node, graph or sampled:N, 2 <= N <= 1000000)";
}

// Replaces %p with the pid, %r with the rank (0 when unknown), %% with %.
inline std::string ExpandOutputPattern(std::string_view pattern, int64_t pid, int rank) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      const char c = pattern[i + 1];
      if (c == 'p') {
        out += std::to_string(pid);
        ++i;
        continue;
      }
      if (c == 'r') {
        out += std::to_string(rank < 0 ? 0 : rank);
        ++i;
        continue;
      }
      if (c == '%') {
        out += '%';
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

}  // namespace sightline::recenv
