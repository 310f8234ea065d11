// What `sightline analyze` does with a document once a reader has read it, for the fuzz targets
// (fuzz_reader, fuzz_pipeline, fuzz_recorder, fuzz_nsys_rows) and the regression test that replays
// their findings (tests/cli/fuzz_regressions_test.cc): every registered analysis and the findings
// on a trace, the serving metrics on benchmark results, an iteration log's own report, the TensorRT
// and Nsight Compute reports, the all-reduce tuner and plots on a sweep; then the text, JSON and
// HTML reporters. Errors are the program's business (a clear message); only crashes, leaks, hangs
// and sanitizer reports are findings.
#pragma once

#include "importers/inputs.h"

namespace sightline::fuzz {

void RunWholeProgram(InputDocumentValue& document);

}  // namespace sightline::fuzz
