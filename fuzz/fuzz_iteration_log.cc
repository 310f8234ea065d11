// Iteration logs: Sightline's own JSON lines and TensorRT-LLM's three shapes (IterationStats JSON
// lines or array, the PyTorch executor's log lines, the C++ runtime's --log_iteration_data lines),
// through the one entry point `analyze --iteration-log` uses.
#include "fuzz_support.h"
#include "importers/iteration_log/iteration_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sightline::ParseIterationLog(sightline::fuzz::AsView(data, size), "fuzz.log");
  return 0;
}
