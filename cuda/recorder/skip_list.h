// SIGHTLINE_RECORD_SKIP, the recorder's diagnostic list of what to leave out
// (docs/formats/recorder.md): parsed apart from the injection so that a test reads it without a
// GPU. Internal to libsightline_recorder.so.
#pragma once

#include <cupti.h>

#include <vector>

namespace sightline::recorder {

// SIGHTLINE_RECORD_SKIP: activity kinds to leave out, to see what each one costs; `graph_nodes`
// leaves out the graph node callbacks, `graphs` the graph creation callbacks, `driver_launches`
// the driver API's launch calls (recorded for the whole run without --driver-api).
void ParseSkip(const char* text, std::vector<CUpti_ActivityKind>* out, bool* graph_nodes,
               bool* graph_events, bool* driver_launches);

}  // namespace sightline::recorder
