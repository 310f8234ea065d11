/* Uses the C API of the installed instrument header (it must compile as C). */
#include <sightline/instrument.h>

int main(void) {
  for (int i = 0; i < 3; ++i) {
    sightline_iteration_begin(i);
    sightline_range_push(SIGHTLINE_NVTX_VERBOSE, "work");
    sightline_log_field(SIGHTLINE_GENERATED_TOKENS, 4);
    sightline_log_double("ratio", 0.5);
    sightline_range_pop(SIGHTLINE_NVTX_VERBOSE);
    sightline_iteration_end(i);
  }
  sightline_flush();
  return 0;
}
