#pragma once
inline int FormatVersion() { return 1; }
