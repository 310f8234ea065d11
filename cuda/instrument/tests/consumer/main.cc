// Uses the C++ layer of the installed instrument header: three iterations with fields and ranges.
#include <sightline/instrument.h>

int main() {
  for (int i = 0; i < 3; ++i) {
    sightline::ScopedIteration iteration(i);
    sightline::ScopedRange range("work", sightline::kNvtxVerbose);
    sightline::LogField(SIGHTLINE_GENERATED_TOKENS, 4);
    sightline::LogUser("phase", "decode");
  }
  return 0;
}
