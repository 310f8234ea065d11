// Exact number conversions for the Kineto importer. Chrome-trace `ts`/`dur` are microseconds
// written as decimal text ("1365627865398.728", "1682725898082228", "68.0"); at epoch
// magnitudes a double cannot hold every nanosecond, so the text itself is scaled to integer ns.
#pragma once

#include <cstdint>
#include <string_view>

namespace sightline::kineto {

// Converts a JSON number token in microseconds to nanoseconds, exactly: digits are scaled by
// 1000 in integer arithmetic; digits below 1 ns round half away from zero. Accepts a sign,
// a fraction and an exponent; trailing JSON whitespace is ignored. False when the token is not
// a number or the result does not fit in int64.
bool MicrosTokenToNs(std::string_view token, int64_t* ns);

// Parses a decimal integer with an optional sign (all of `text`). False otherwise.
bool ParseInt64(std::string_view text, int64_t* value);

}  // namespace sightline::kineto
