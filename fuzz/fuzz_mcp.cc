// The MCP server's JSON-RPC message handling (`sightline mcp`, docs/mcp.md) on arbitrary input:
// each line is one message to McpServer::Handle, in order, on one server (so that a run analysed
// by an early line is there for later ones), as Serve does (a trailing CR dropped, empty lines
// skipped), the first 32 lines; every reply must be one line of JSON (or nothing, for a
// notification). The seeds (fuzz/seeds/mcp) are sessions through every method and tool:
// protocol errors, and tools called on a small trace of tests/data (paths are relative to the
// repository's root, where scripts/fuzz.sh runs the fuzzers).
// CI executions: 150
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/mcp_server.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = sightline::fuzz::AsView(data, size);
  sightline::McpServer server;
  simdjson::dom::parser parser;
  size_t start = 0;
  for (int lines = 0; start < input.size() && lines < 32; ++lines) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string reply = server.Handle(line);
    if (!reply.empty()) {
      simdjson::dom::element e;
      if (reply.find('\n') != std::string::npos ||
          parser.parse(reply).get(e) != simdjson::SUCCESS) {
        std::fprintf(stderr, "fuzz_mcp: a reply that is not one line of JSON: %s\n", reply.c_str());
        std::abort();
      }
    }
  }
  return 0;
}
