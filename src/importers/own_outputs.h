// Sightline's own reports among a directory's files: `sightline analyze DIR -o DIR/report.txt`
// run twice must not take the first run's report for an input (it is refused as an output over an
// input, or read as a format it is not). ExpandInputs (inputs.h) leaves them out and lists them.
#pragma once

#include <string>
#include <string_view>

namespace sightline {

// The first bytes of a report Sightline writes: text ("Sightline 0.1.0 report"), JSON (an object
// whose "tool" names "sightline") or HTML (<title>Sightline report).
bool LooksLikeSightlineReport(std::string_view head);

// Reads the first bytes of `path` itself, without noting the file as an input of this run (so
// that this run may write it again). False when it cannot be read.
bool IsSightlineReport(const std::string& path);

}  // namespace sightline
