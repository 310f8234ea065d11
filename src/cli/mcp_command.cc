// `sightline mcp`: the Model Context Protocol server over standard input and output (docs/mcp.md).
#include <cstdio>
#include <memory>

#include "agent/mcp_server.h"
#include "cli/commands.h"

namespace sightline::cli {

void AddMcpCommand(CLI::App& app, CommandRunner& runner) {
  CLI::App* cmd = app.add_subcommand(
      "mcp",
      "Serve the Model Context Protocol over standard input and output (JSON-RPC 2.0, one message "
      "a line): tools to analyse runs, list findings with their evidence, read sections and "
      "tables, run queries, diff two runs and explain a finding; every number with its source "
      "(docs/mcp.md). For agents: register `sightline mcp` as a stdio server.");
  cmd->callback([&runner] {
    runner = [] {
      McpServer server;
      server.Serve(stdin, stdout);
      return kExitOk;
    };
  });
}

}  // namespace sightline::cli
