// A stand-in for libcuda.so.1 in the instrument tests: the four entry points the library loads,
// which records each profiler call in a text log ("start;stop;") that the tests read back.
#include <cstddef>
#include <cstring>

extern "C" {

static char events[4096];
static int context_current = 1;

static void Append(const char* what) {
  if (strlen(events) + strlen(what) + 1 < sizeof events) strcat(events, what);
}

int cuProfilerStart(void) {
  Append("start;");
  return 0;
}
int cuProfilerStop(void) {
  Append("stop;");
  return 0;
}
int cuCtxGetCurrent(void** context) {
  *context = context_current ? reinterpret_cast<void*>(0x1) : nullptr;
  return 0;
}
int cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = 1000;
  *total_bytes = 5096;
  return 0;
}

// Test controls.
const char* fake_driver_events(void) { return events; }
void fake_driver_reset(int with_context) {
  events[0] = '\0';
  context_current = with_context;
}

}  // extern "C"
