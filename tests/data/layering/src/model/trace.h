// Fixture for the layering check: model may include base.
#pragma once
#include "base/clock.h"
