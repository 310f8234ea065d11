#pragma once
// Shared by every analysis.
