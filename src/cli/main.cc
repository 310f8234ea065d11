// sightline: command-line entry point. Subcommands live in one file each (cli/*_command.cc).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Sightline: performance analysis of LLM inference on NVIDIA GPUs.\n"
      "Reads Nsight Systems SQLite exports and PyTorch profiler traces and says where the time "
      "goes."};
  app.set_version_flag("--version", std::string("sightline ") + SIGHTLINE_VERSION);
  app.require_subcommand(1);
  sightline::cli::CommandRunner runner;
  sightline::cli::AddAnalyzeCommand(app, runner);
  sightline::cli::AddOccupancyCommand(app, runner);
  sightline::cli::AddNcuCommand(app, runner);
  sightline::cli::AddExportCommand(app, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return sightline::cli::kExitUsage;
  }
  return runner ? runner() : 0;
}
