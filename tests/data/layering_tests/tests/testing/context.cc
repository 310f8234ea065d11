// Fixture: the helper's source, whose includes count for the header's users.
#include "analyses/context.h"

#include "testing/context.h"
