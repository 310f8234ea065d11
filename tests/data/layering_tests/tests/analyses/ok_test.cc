// Fixture: a test of analyses with the helper that brings analyses (allowed).
#include "analyses/context.h"
#include "testing/context.h"
