// Test-only hooks of the instrument library (not installed). Tests link the static library.
#pragma once

#include <string>

namespace sightline::instrument {

// Forgets all state (closes the log, ends the window bookkeeping without calling the driver) and
// reads the environment again, as at load.
void ReloadForTesting();

// Loads `library` instead of libcuda.so.1 from now on (e.g. a name that does not exist).
void SetDriverLibraryForTesting(const std::string& library);

}  // namespace sightline::instrument
