#pragma once
#include "analyses/common/analysis.h"
