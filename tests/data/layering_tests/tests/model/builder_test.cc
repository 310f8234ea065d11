// Fixture: a test of model; the first helper reads model (allowed), the second brings analyses
// through its own include (refused).
#include "model/trace.h"
#include "testing/context.h"
#include "testing/fixtures.h"
