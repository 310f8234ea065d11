// Subcommand registration for the sightline binary. Each Add...Command adds its options to the app
// and sets `runner` (run after parsing) when its subcommand is chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "base/status.h"

namespace sightline::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // ran, and a check the user asked for failed
inline constexpr int kExitUsage = 2;   // bad option, bad or unreadable input

using CommandRunner = std::function<int()>;

void AddAnalyzeCommand(CLI::App& app, CommandRunner& runner);
void AddOccupancyCommand(CLI::App& app, CommandRunner& runner);
void AddNcuCommand(CLI::App& app, CommandRunner& runner);
void AddExportCommand(CLI::App& app, CommandRunner& runner);
void AddAllReduceCommand(CLI::App& app, CommandRunner& runner);
void AddRecordCommand(CLI::App& app, CommandRunner& runner);
void AddDiffCommand(CLI::App& app, CommandRunner& runner);

// Prints "sightline: error: ..." to stderr and returns the exit code for the status.
int ReportError(const Status& status);

}  // namespace sightline::cli
