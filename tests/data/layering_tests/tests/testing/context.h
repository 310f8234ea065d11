// Fixture: a helper that reads model through the other helper, and analyses in its source.
#pragma once
#include "testing/fixtures.h"
