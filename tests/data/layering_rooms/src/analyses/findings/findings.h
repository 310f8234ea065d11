// Fixture (layering_refuses_upward_room): the rules read the analyses -- allowed.
#pragma once
#include "analyses/ranks.h"
