#include "sightline/gpu_check.h"
#include "shared/format.h"
int main() { return FormatVersion(); }
