#include "shared/format.h"
#include "sightline/gpu_check.h"
int main() { return FormatVersion(); }
