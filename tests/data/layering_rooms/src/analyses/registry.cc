// Fixture (layering_refuses_upward_room): the registry, above every room -- allowed.
#include "analyses/findings/findings.h"
#include "analyses/ranks.h"
