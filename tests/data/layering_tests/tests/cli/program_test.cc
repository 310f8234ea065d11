// Fixture: a test of the program as a whole may include every stage (allowed).
#include "analyses/context.h"
#include "base/status.h"
#include "testing/context.h"
