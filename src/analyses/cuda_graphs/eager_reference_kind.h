// An eager reference as a kind of document (analyses/common/document_kind.h): a trace of the same
// program run eagerly, recorded separately and named by --eager-reference; not a rank of the job,
// but the eager runs that estimate the CUDA graphs another trace ran whole (cuda_graphs.h).
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& EagerReferenceKind();

}  // namespace sightline
