// An all-reduce sweep as a kind of document (analyses/common/document_kind.h): read by `sightline
// allreduce plot|tune` (src/allreduce/), which `analyze` says when given one.
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& AllreduceSweepKind();

}  // namespace sightline
