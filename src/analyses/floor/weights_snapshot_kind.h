// A PyTorch memory snapshot named by `analyze --weights-snapshot` as a kind of document
// (analyses/common/document_kind.h): joined to the run for the floor (floor.h), the weights it
// holds at its dump (memory by purpose: analyses/memory) being the bytes each step reads, without
// a model config or beside its figure. Only the option makes a snapshot this kind; given as an
// input, a snapshot is a trace. docs/analyses/floor.md, "Without a config".
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& WeightsSnapshotKind();

}  // namespace sightline
