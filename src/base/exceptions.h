// The standard library reports running out of memory (std::bad_alloc) and a refused resource (a
// thread, std::system_error) by throwing; Sightline's APIs return Status. Where such an exception
// can end a thread or the program (main, a thread's body, a callback from C code) it is turned
// into a Status here, so that the user reads what happened and what to do, with exit status 2,
// instead of an abort (docs/reliability.md, "Resources").
#pragma once

#include <exception>

#include "base/status.h"

namespace sightline {

// The Status for a caught exception: std::bad_alloc and std::length_error (a size beyond what can
// be allocated) are "out of memory" (InvalidInput: the input needs more than this process may
// take), std::system_error says what the system refused (IoError), anything else is Internal.
Status StatusOfException(std::exception_ptr e);

}  // namespace sightline
