#include "reporters/reporter.h"

namespace sightline {

std::string RenderTextReport(const Report& report, const TextReportOptions& options) { return ""; }

}  // namespace sightline
