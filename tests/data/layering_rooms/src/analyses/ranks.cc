// Fixture (layering_refuses_upward_room): an analysis that calls a rule -- refused.
#include "analyses/ranks.h"

#include "analyses/findings/findings.h"
