// Fixture: a helper that reads model.
#pragma once
#include "model/trace.h"
