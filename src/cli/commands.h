// Subcommand registration for the sightline binary. Each Add...Command adds its options to the app
// and sets `runner` (run after parsing) when its subcommand is chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sightline::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // ran, and a check the user asked for failed
inline constexpr int kExitUsage = 2;   // bad option, bad or unreadable input
inline constexpr int kExitOutput = 3;  // an output (a file, standard output) could not be written
// `diff --fail-if-slower`: the data cannot tell slower from not slower (the verdict's interval
// straddles the threshold, or too few iterations); more iterations or runs would.
inline constexpr int kExitCannotTell = 4;

using CommandRunner = std::function<int()>;

void AddAnalyzeCommand(CLI::App& app, CommandRunner& runner);
void AddOccupancyCommand(CLI::App& app, CommandRunner& runner);
void AddNcuCommand(CLI::App& app, CommandRunner& runner);
void AddExportCommand(CLI::App& app, CommandRunner& runner);
void AddAllReduceCommand(CLI::App& app, CommandRunner& runner);
void AddRecordCommand(CLI::App& app, CommandRunner& runner);
void AddDiffCommand(CLI::App& app, CommandRunner& runner);
void AddBaselineCommand(CLI::App& app, CommandRunner& runner);

// `sightline diff A1 A2 -- B1 B2`: CLI11 drops "--" and would run the two sides together, so main
// turns the first "--" after `diff` into this option (it takes the candidate's runs).
inline constexpr char kDiffCandidateRunsOption[] = "--candidate-runs";
void AddFormatsCommand(CLI::App& app, CommandRunner& runner);
void AddFindingsCommand(CLI::App& app, CommandRunner& runner);
void AddRedactCommand(CLI::App& app, CommandRunner& runner);
void AddQueryCommand(CLI::App& app, CommandRunner& runner);
void AddCheckClaimsCommand(CLI::App& app, CommandRunner& runner);
void AddMcpCommand(CLI::App& app, CommandRunner& runner);

// A number option's range, checked by the option's name and said plainly: `--top: '0' is out of
// range: 1 to 2147483647`. CLI11's PositiveNumber, NonNegativeNumber and Range print their limits
// as doubles in full (309 digits for "positive") and let "nan" through (every comparison with NaN
// is false: "nan" as --fail-if-slower made a gate that could never fail); "inf" likewise. `range`
// says the limits in words; `name` is what --help shows after the type.
inline CLI::Validator NumberIn(double lo, double hi, std::string range, std::string name) {
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (v < lo || v > hi) return "'" + text + "' is out of range: " + range;
        return std::string();
      },
      std::move(name));
}

// A count (rows, threads, blocks, ranks): 1 to the largest value of the option's type.
template <typename T>
CLI::Validator PositiveCount() {
  const T hi = std::numeric_limits<T>::max();
  return NumberIn(1, static_cast<double>(hi), "1 to " + std::to_string(hi), "POSITIVE");
}

// A percentage: 0 to 100.
inline CLI::Validator Percent() { return NumberIn(0, 100, "0 to 100", "0-100"); }

// `--iterations REGEX`, declared once for analyze, export, diff and baseline save: the regex is
// compiled when the command line is read, so a bad one is refused (exit 2) before any input is.
// `extra` ends the help text (what the command adds, e.g. where a default comes from).
CLI::Option* AddIterationsOption(CLI::App* cmd, std::string& regex, std::string_view extra = {});

// Prints "sightline: error: ..." to stderr and returns the exit code for the status.
int ReportError(const Status& status);

// Writes to standard output; false when the write failed. The first failure's errno is kept for
// main's closing check, which turns any failed write to standard output into exit 3.
bool WriteToStdout(std::string_view text);
int StdoutErrno();  // 0: no write has failed

// Refuses, before any work, an output path that is one of the inputs named on the command line
// (the same file, also through links): notes them as inputs (NoteInputFile) and asks
// CheckNotAnInput; the writers refuse inputs found later (a directory's files) the same way.
Status CheckOutputIsNotAnInput(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace sightline::cli
