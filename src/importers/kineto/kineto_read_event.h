// Reads one element of Kineto's traceEvents into an Event (fields in any order, unknown ones
// skipped; `args` is read only when the event's category can use it).
#pragma once

#include "importers/kineto/kineto_event.h"
#include "importers/kineto/kineto_json.h"

namespace sightline::kineto {

// Returns a simdjson error only for malformed JSON (fatal); an element of the wrong shape is
// reported through event->bad_value or missing fields. `event` must hold a default Event or the
// previous element's result (its args are reset only when that one read them).
simdjson::error_code ReadEvent(sj::value& element, Event* event);

}  // namespace sightline::kineto
