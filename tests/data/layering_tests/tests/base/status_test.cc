// Fixture: a test of base that includes model (refused).
#include "base/status.h"

#include "model/trace.h"
