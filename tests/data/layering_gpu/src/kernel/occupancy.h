#pragma once
inline int Occupancy() { return 1; }
