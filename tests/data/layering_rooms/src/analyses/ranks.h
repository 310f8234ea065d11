// Fixture (layering_refuses_upward_room): an analysis, which may include the facts.
#pragma once
#include "analyses/analysis_context.h"
