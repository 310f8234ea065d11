// The tools of `sightline mcp` (mcp_server.h): their list with input schemas, and their calls.
// Each call answers a JSON object (the tool's structured content) or an error message.
#pragma once

#include <simdjson.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "query/query_db.h"

namespace sightline {

// A run analysed by the `analyze` tool: its inputs and its query database (the trace model, the
// facts and the report, docs/query.md), from which every answer is read.
struct McpRun {
  std::string id;  // "run1", ...
  std::vector<std::string> paths;
  QueryDb db;
};

struct McpRuns {
  std::vector<std::unique_ptr<McpRun>> runs;
};

// The "tools" array of tools/list, as JSON.
std::string McpToolList();

// Calls tool `name` with `args` (an object). InvalidArgument for an unknown tool or arguments
// that do not fit its schema (a JSON-RPC error); other errors (an input that cannot be read, a
// query that fails) are the tool's own (isError).
StatusOr<std::string> CallMcpTool(McpRuns& runs, std::string_view name, simdjson::dom::element args,
                                  bool* tool_error);

}  // namespace sightline
