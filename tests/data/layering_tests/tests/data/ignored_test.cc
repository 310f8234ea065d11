// Fixture: data/ holds no tests (not checked).
#include "analyses/context.h"
