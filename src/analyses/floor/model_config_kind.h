// A model's config as a kind of document (analyses/common/document_kind.h): joined to the run
// (--model-config) for the floor of each step (floor.h); never analysed alone.
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& ModelConfigKind();

}  // namespace sightline
