// The iteration log as a kind of document (analyses/common/document_kind.h): joined to each trace's
// iterations (--iteration-log; iteration_log_join.h), or, without the trace of its run, what it
// states on its own (iteration_log_summary.h).
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& IterationLogKind();

}  // namespace sightline
