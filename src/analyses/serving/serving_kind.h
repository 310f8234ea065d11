// Serving results as a kind of document (analyses/common/document_kind.h): a benchmark's results
// or a request log join the run's traces (--requests; the serving analysis, serving_analysis.cc),
// alone they are the serving report, and two (or two sides of runs) are the serving diff.
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& ServingResultsKind();

}  // namespace sightline
