// placeholder, replaced below
#include "cli/commands.h"
namespace sightline::cli {
void AddNcuCommand(CLI::App& app, CommandRunner& runner) { (void)app; (void)runner; }
}  // namespace sightline::cli
