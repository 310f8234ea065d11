#include "kernel/occupancy.h"
int main() { return Occupancy(); }
