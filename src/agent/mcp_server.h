// `sightline mcp`: a Model Context Protocol server over standard input and output (JSON-RPC 2.0,
// one message a line, protocol version 2025-06-18; docs/mcp.md). Its tools analyse inputs, list
// findings with their evidence, read a section's facts and tables, run a query, diff two runs and
// explain a finding; every number in an answer carries its source (section, table, row, column,
// or the finding and evidence key), so that an agent can cite it and `sightline check-claims` can
// check what it says.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "query/query_db.h"

namespace sightline {

inline constexpr char kMcpProtocolVersion[] = "2025-06-18";

class McpServer {
 public:
  McpServer();
  ~McpServer();
  // One message in, the reply out (empty for a notification). Never throws for bad input: a
  // message that is not JSON-RPC gets a JSON-RPC error.
  std::string Handle(std::string_view line);
  // Reads messages from `in` until its end and writes each reply, a line each, to `out`.
  void Serve(std::FILE* in, std::FILE* out);

 private:
  struct State;  // the runs analysed so far (mcp_tools.cc)
  std::unique_ptr<State> state_;
};

}  // namespace sightline
