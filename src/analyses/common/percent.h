// A part as a percentage of a whole, 0 when the whole is not positive (the report's "%" columns).
#pragma once

#include "base/time_units.h"

namespace sightline {

inline double Pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

inline double Pct(DurationNs part, DurationNs whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace sightline
