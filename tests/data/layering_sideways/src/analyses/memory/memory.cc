// Below gpu_metrics but a sideways include of overview, a room memory does not name: refused.
#include "analyses/memory/memory.h"

#include "analyses/overview/overview.h"
