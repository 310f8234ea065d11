// A trace as a kind of document (analyses/common/document_kind.h): the run's members, each a rank
// of the job (or a side of a diff), through every analysis of this stage's registry (registry.cc)
// and the multi-trace analyses (pipeline/registry.cc).
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& TraceKind();

}  // namespace sightline
