// A saved baseline (`sightline baseline save NAME TRACES...`): the per-iteration figures of each
// run (diff/step_samples.h), what a later `sightline diff --baseline NAME TRACE...` needs for its
// verdict, without the traces. A small JSON file; layout: docs/formats/baseline.md.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "diff/step_samples.h"

namespace sightline {

inline constexpr char kBaselineFormat[] = "sightline-baseline";
inline constexpr int kBaselineFormatVersion = 1;

struct SavedBaseline {
  std::string tool_version;      // the sightline that wrote it
  std::string iterations_regex;  // --iterations when saved; empty: the default names
  std::vector<RunSamples> runs;
};

// The file's text (JSON, one run per element of "runs").
std::string SerializeBaseline(const SavedBaseline& baseline);

// Reads a file SerializeBaseline wrote (any format_version up to kBaselineFormatVersion); every
// run is checked (RunSamples::Validate). `path` names the file in messages.
StatusOr<SavedBaseline> ParseBaseline(const std::string& text, const std::string& path);

// True when the text starts like a saved baseline (a JSON object whose "format" is
// kBaselineFormat), for telling a baseline from a trace given in its place.
bool LooksLikeBaseline(const std::string& text);

}  // namespace sightline
