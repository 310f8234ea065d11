// Reads the top-level fields of a Kineto trace other than traceEvents into TopLevelInfo (the
// mapping is listed in kineto_metadata.h).
#pragma once

#include "importers/kineto/kineto_json.h"
#include "importers/kineto/kineto_metadata.h"

namespace sightline::kineto {

// Unknown keys are left alone. Returns an error only for malformed JSON.
simdjson::error_code ReadTopLevelField(sj::raw_json_string key, sj::value& value,
                                       TopLevelInfo* info);

}  // namespace sightline::kineto
