// A TensorRT engine's exports as a kind of document (analyses/common/document_kind.h): analysed
// alone (trt/trt_analysis.h, trt_report.h, and the rules on engines), or two engines layer by layer
// (trt/trt_diff.h). Its folder holds no analysis of its own; it sits in the analyses' top room,
// with the registry, because the engine's report ends with the finding rules on engines.
#pragma once

#include "analyses/common/document_kind.h"

namespace sightline {

const DocumentKind& TrtEngineKind();

}  // namespace sightline
