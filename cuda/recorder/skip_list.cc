#include "skip_list.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "shared/recorder_env.h"

namespace sightline::recorder {

void ParseSkip(const char* text, std::vector<CUpti_ActivityKind>* out, bool* graph_nodes,
               bool* graph_events, bool* driver_launches) {
  const struct {
    const char* name;
    std::vector<CUpti_ActivityKind> kinds;
  } kNames[] = {
      {"kernel", {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}},
      {"runtime", {CUPTI_ACTIVITY_KIND_RUNTIME}},
      {"sync", {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}},
      {"memcpy", {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2}},
      {"memset", {CUPTI_ACTIVITY_KIND_MEMSET}},
      {"nvtx", {CUPTI_ACTIVITY_KIND_MARKER}},
  };
  std::string list = text;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    bool known = item.empty();
    if (item == "graph_nodes") {
      *graph_nodes = false;
      known = true;
    }
    if (item == "graphs") {
      *graph_events = false;
      known = true;
    }
    if (item == "driver_launches") {
      *driver_launches = false;
      known = true;
    }
    for (const auto& n : kNames) {
      if (item == n.name) {
        out->insert(out->end(), n.kinds.begin(), n.kinds.end());
        known = true;
      }
    }
    if (!known) {
      std::fprintf(stderr, "sightline-recorder: %s: unknown kind '%s' (ignored)\n",
                   recenv::kSkipEnv, item.c_str());
    }
    pos = comma + 1;
  }
}

}  // namespace sightline::recorder
