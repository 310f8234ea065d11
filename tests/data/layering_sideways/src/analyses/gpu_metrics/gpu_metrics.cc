// Names overview: may include it and common.
#include "analyses/gpu_metrics/gpu_metrics.h"

#include "analyses/overview/overview.h"
