// Fixture: a test outside every stage's folder (refused).
#include "base/status.h"
