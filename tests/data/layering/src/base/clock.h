// Fixture for the layering check's negative test: base includes model, a stage above it.
#pragma once
#include <vector>

#include "model/trace.h"
#include "sightline/instrument.h"  // public headers are free
