int Occupancy() { return 1; }
